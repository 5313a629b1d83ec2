import type { Socket } from 'node:net';
import { LineSplitter, MAX_RPC_LINE_BYTES, encodeLine } from './framing.js';
import { rpcError } from './errors.js';

/** A buffered-but-unsent backlog above this closes the connection: a slow reader must not grow memory. */
export const MAX_CONNECTION_BACKLOG_BYTES = 16 * 1024 * 1024;

/** One client connection: reads request lines, writes responses and notifications. */
export class Connection {
  readonly id: number;
  readonly #socket: Socket;
  readonly #closeHandlers: Array<() => void> = [];
  #closed = false;

  constructor(id: number, socket: Socket, onLine: (line: string, conn: Connection) => void) {
    this.id = id;
    this.#socket = socket;
    const splitter = new LineSplitter(MAX_RPC_LINE_BYTES, {
      line: (text) => {
        if (!this.#closed && text.trim() !== '') onLine(text, this);
      },
      overflow: () => this.#rejectOversized(),
    });
    socket.on('data', (chunk: Buffer) => {
      if (!this.#closed) splitter.push(chunk);
    });
    socket.on('end', () => {
      if (!this.#closed) splitter.end();
      this.close();
    });
    socket.on('error', () => this.close());
    socket.on('close', () => this.#markClosed());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one message; drops the connection instead of buffering without bound. */
  send(message: unknown): void {
    if (this.#closed) return;
    this.#socket.write(encodeLine(message));
    if (this.#socket.writableLength > MAX_CONNECTION_BACKLOG_BYTES) this.#socket.destroy();
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  onClose(handler: () => void): void {
    if (this.#closed) handler();
    else this.#closeHandlers.push(handler);
  }

  close(): void {
    if (this.#closed) return;
    this.#socket.end();
    this.#markClosed();
  }

  #rejectOversized(): void {
    this.send({ jsonrpc: '2.0', id: null, error: rpcError('REQUEST_TOO_LARGE', `request line exceeds ${MAX_RPC_LINE_BYTES} bytes`) });
    this.close();
  }

  #markClosed(): void {
    if (this.#closed && this.#closeHandlers.length === 0) return;
    this.#closed = true;
    const handlers = this.#closeHandlers.splice(0);
    for (const handler of handlers) handler();
  }
}
