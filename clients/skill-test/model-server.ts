import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { isCountTokensCall } from './anthropic-api.js';
import { sendReply, type ModelReply } from './model-replies.js';
import { toModelRequest, type ModelRequest } from './model-request.js';

export { GEMINI_SHELL_TOOL, type Said, type ToolCall } from './tool-calls.js';
export { geminiChunk, geminiEvents, responsesEvents, type ModelReply } from './model-replies.js';
export type { ConversationEntry, ModelApi, ModelRequest } from './model-request.js';

/**
 * A scripted model provider on 127.0.0.1 for driving the real Codex, Gemini and Claude Code CLIs
 * offline. Codex speaks the OpenAI Responses API (`POST /v1/responses`, SSE); Gemini speaks the
 * Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`); Claude Code speaks the
 * Anthropic Messages API (`POST /v1/messages?beta=true`, SSE; see anthropic-api.ts). Every request
 * is recorded.
 */

/** Chooses the reply to a model request. */
export type ModelScript = (request: ModelRequest) => ModelReply | Promise<ModelReply>;

/** A running scripted model server. */
export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Every request received, model calls and others, in arrival order. */
  readonly requests: ModelRequest[];
  /** Model calls only (Responses, Gemini generate and Messages requests). */
  modelRequests(api?: 'responses' | 'gemini' | 'anthropic'): ModelRequest[];
  /** Requests that were not model calls (Gemini `:countTokens` and Messages `count_tokens` are answered, anything else gets 404). */
  unknownRequests(): ModelRequest[];
  /** Replaces the reply script. */
  script(fn: ModelScript): void;
  /** The first model request at index `since` or later of `requests` (default: the next to arrive). */
  waitForModelRequest(since?: number, timeoutMs?: number): Promise<ModelRequest>;
  /** Ends hanging replies, closes connections and stops listening. */
  close(): Promise<void>;
}

/** Options of `startModelServer`. */
export interface ModelServerOptions {
  script?: ModelScript;
  /** Called for every request no handler knew; defaults to a line on stderr. */
  onUnknown?: (request: ModelRequest) => void;
}


/** The default script: every turn answers `OK`. */
export const replyOk: ModelScript = () => ({ text: 'OK' });

/** A script that plays the given replies in order and repeats the last one. */
export function sequence(...replies: ModelReply[]): ModelScript {
  let index = 0;
  return () => {
    const reply = replies[Math.min(index, replies.length - 1)] ?? { text: 'OK' };
    index += 1;
    return reply;
  };
}

/** A script that runs `command` once, then answers `text` after the tool result comes back. */
export function toolThenText(command: string, text: string): ModelScript {
  return (request) => (request.afterToolResult ? { text } : { toolCall: { command } });
}

/** Starts a scripted model server on 127.0.0.1 with an ephemeral port. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const state: ServerState = {
    script: options.script ?? replyOk,
    requests: [],
    hanging: new Set(),
    waiters: [],
    counter: 0,
    onUnknown: options.onUnknown ?? logUnknown,
  };
  const server = createServer((req, res) => void handle(state, req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return makeHandle(server, state, port);
}

/** A pending `waitForModelRequest`. */
interface Waiter {
  since: number;
  resolve: (request: ModelRequest) => void;
  reject: (error: Error) => void;
}

interface ServerState {
  script: ModelScript;
  requests: ModelRequest[];
  hanging: Set<ServerResponse>;
  waiters: Waiter[];
  counter: number;
  onUnknown: (request: ModelRequest) => void;
}

/** The public face of a started server. */
function makeHandle(server: Server, state: ServerState, port: number): ModelServer {
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: state.requests,
    modelRequests: (api) => state.requests.filter((r) => (api === undefined ? r.api !== 'unknown' : r.api === api)),
    unknownRequests: () => state.requests.filter((r) => r.api === 'unknown'),
    script: (fn) => {
      state.script = fn;
    },
    waitForModelRequest: (since, timeoutMs) => waitForModelRequest(state, since ?? state.requests.length, timeoutMs ?? 30_000),
    close: () => closeServer(server, state),
  };
}

/** Resolves with the first model request at index `since` or later, or rejects after `timeoutMs`. */
function waitForModelRequest(state: ServerState, since: number, timeoutMs: number): Promise<ModelRequest> {
  const found = state.requests.slice(since).find((r) => r.api !== 'unknown');
  if (found !== undefined) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      since,
      resolve: (request) => {
        clearTimeout(timer);
        resolve(request);
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    };
    const timer = setTimeout(() => {
      state.waiters = state.waiters.filter((w) => w !== waiter);
      reject(new Error(`no model request within ${timeoutMs} ms`));
    }, timeoutMs);
    state.waiters.push(waiter);
  });
}

/** Rejects pending waits, drops hanging replies and open connections, and stops listening. */
async function closeServer(server: Server, state: ServerState): Promise<void> {
  for (const waiter of state.waiters) waiter.reject(new Error('model server closed'));
  state.waiters = [];
  for (const res of state.hanging) res.destroy();
  state.hanging.clear();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function logUnknown(request: ModelRequest): void {
  process.stderr.write(`model-server: unknown request ${request.method} ${request.url}\n`);
}

/** Records a request, then answers it from the script (model calls) or otherwise. */
async function handle(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const request = toModelRequest(req.method ?? 'GET', req.url ?? '/', req.headers, await readBody(req));
    state.requests.push(request);
    notifyWaiters(state, request);
    if (request.api === 'unknown') return answerOther(state, request, res);
    const reply = await state.script(request);
    if (!('hang' in reply) && !('error' in reply)) state.counter += 1;
    sendReply(request, reply, state.counter, res, (hanging) => {
      state.hanging.add(hanging);
      hanging.on('close', () => state.hanging.delete(hanging));
    });
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 500, message: String(error) } }));
  }
}

/** Resolves the waits that a new model request satisfies. */
function notifyWaiters(state: ServerState, request: ModelRequest): void {
  if (request.api === 'unknown') return;
  const index = state.requests.length - 1;
  const ready = state.waiters.filter((w) => index >= w.since);
  state.waiters = state.waiters.filter((w) => index < w.since);
  for (const waiter of ready) waiter.resolve(request);
}

/** Answers Gemini's `:countTokens` and Messages `count_tokens`, and 404 (logged through `onUnknown`) to anything else. */
function answerOther(state: ServerState, request: ModelRequest, res: ServerResponse): void {
  if (request.method === 'POST' && request.url.includes(':countTokens')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ totalTokens: 10 }));
    return;
  }
  if (isCountTokensCall(request.method, request.url.split('?')[0] ?? '')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ input_tokens: 10 }));
    return;
  }
  state.onUnknown(request);
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: 404, message: `not found: ${request.method} ${request.url}` } }));
}

/** The request body, decompressed when the client compressed it. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'gzip') return gunzipSync(raw);
  if (encoding === 'deflate') return inflateSync(raw);
  if (encoding === 'br') return brotliDecompressSync(raw);
  return raw;
}
