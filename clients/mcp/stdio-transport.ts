import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { rpcError } from '../../rpc/errors.js';
import { LineSplitter, encodeLine, limitText, type LineEdges } from '../../rpc/framing.js';
import { readOversized } from './oversized.js';

/** 10 MiB, as the MCP SDK's own stdio transport: the largest message `skillctl mcp` reads. */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * MCP over stdin/stdout, one JSON-RPC message a line. Unlike the SDK's stdio transport, which
 * stops reading for good at its first message over 10 MiB, a message over `maxMessageBytes` is
 * dropped unread and refused with `REQUEST_TOO_LARGE` under the id one end of its line shows (with
 * none when neither does), and reading goes on. An oversized answer to a request of ours reaches
 * the server as that error in its place, so that the request fails at once.
 */
export class StdioLineTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxMessageBytes: number;
  readonly #splitter: LineSplitter;

  constructor(input: Readable = process.stdin, output: Writable = process.stdout, maxMessageBytes = MAX_MCP_MESSAGE_BYTES) {
    this.#input = input;
    this.#output = output;
    this.#maxMessageBytes = maxMessageBytes;
    this.#splitter = new LineSplitter(maxMessageBytes, { line: (text) => this.#receive(text), overflow: () => undefined, oversized: (edges) => this.#refuse(edges) });
  }

  async start(): Promise<void> {
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
  }

  /** Writes one message; resolves once the output has taken it (after a `drain` when it was full). */
  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(encodeLine(message))) resolve();
      else this.#output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    // Pausing an input someone else still reads would starve them.
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.onclose?.();
  }

  readonly #onData = (chunk: Buffer): void => this.#splitter.push(chunk);
  readonly #onError = (error: Error): void => this.onerror?.(error);

  #receive(text: string): void {
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.onmessage?.(message);
  }

  #refuse(edges: LineEdges): void {
    const why = `a message of ${edges.bytes} bytes is over the ${limitText(this.#maxMessageBytes)} skillctl mcp reads in one message; it was not read`;
    this.onerror?.(new Error(why));
    const { id, response } = readOversized(edges.head, edges.tail);
    const error = rpcError('REQUEST_TOO_LARGE', why);
    if (response) {
      if (id !== undefined) this.onmessage?.({ jsonrpc: '2.0', id, error });
      return;
    }
    void this.send(id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error });
  }
}
