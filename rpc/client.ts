import { createConnection, type Socket } from 'node:net';
import { rpcError } from './errors.js';
import { LineSplitter, MAX_RPC_LINE_BYTES, encodeLine, limitText } from './framing.js';

/** Responses and notifications from the daemon may be large (logs, results): allow 64 MiB lines. */
const MAX_CLIENT_LINE_BYTES = 64 * 1024 * 1024;

/**
 * An error answer from the daemon, or a request refused before it was sent because the daemon
 * would refuse it (`REQUEST_TOO_LARGE`); `dataCode` is the stable code to branch on.
 */
export class RpcCallError extends Error {
  readonly rpcCode: number;
  readonly dataCode: string;
  readonly details: unknown;

  constructor(error: { code: number; message: string; data?: { code?: string; details?: unknown } }) {
    super(error.message);
    this.name = 'RpcCallError';
    this.rpcCode = error.code;
    this.dataCode = error.data?.code ?? 'UNKNOWN';
    this.details = error.data?.details;
  }
}

/** The daemon could not be reached, or the connection dropped before an answer. */
export class DaemonUnreachableError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'DaemonUnreachableError';
  }
}

interface Waiter {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

type NotificationHandler = (params: unknown) => void;

/** A small JSON-RPC client over the daemon's socket, for skillctl, scripts and tests. */
export class RpcClient {
  readonly #socket: Socket;
  readonly #waiters = new Map<number, Waiter>();
  readonly #handlers = new Map<string, Set<NotificationHandler>>();
  readonly #closeHandlers = new Set<(error: Error) => void>();
  #nextId = 1;
  #closedError: Error | null = null;

  private constructor(socket: Socket) {
    this.#socket = socket;
    const splitter = new LineSplitter(MAX_CLIENT_LINE_BYTES, {
      line: (text) => this.#receive(text),
      overflow: () => socket.destroy(new Error('answer line too large')),
    });
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
    socket.on('close', () => this.#fail(new DaemonUnreachableError('connection to the daemon closed')));
    socket.on('error', (error) => this.#fail(new DaemonUnreachableError(`connection to the daemon failed: ${error.message}`, { cause: error })));
  }

  static connect(path: string): Promise<RpcClient> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const onError = (error: Error): void => reject(new DaemonUnreachableError(`cannot connect to ${path}: ${error.message}`, { cause: error }));
      socket.once('error', onError);
      socket.once('connect', () => {
        socket.off('error', onError);
        resolve(new RpcClient(socket));
      });
    });
  }

  /**
   * Sends one request and resolves with its result. Rejects with RpcCallError for an error answer
   * or for a line over `MAX_RPC_LINE_BYTES` (not sent: the connection stays usable), and with
   * DaemonUnreachableError when the connection ends before the answer.
   */
  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    if (this.#closedError !== null) return Promise.reject(this.#closedError);
    const id = this.#nextId++;
    const line = encodeLine(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    // The daemon answers a longer line by closing the connection, which fails every other request on it.
    const bytes = Buffer.byteLength(line) - 1;
    if (bytes > MAX_RPC_LINE_BYTES) {
      const why = `${method} would send ${bytes} bytes, over the ${limitText(MAX_RPC_LINE_BYTES)} the daemon reads in one request; nothing was sent`;
      return Promise.reject(new RpcCallError(rpcError('REQUEST_TOO_LARGE', why)));
    }
    return new Promise<T>((resolve, reject) => {
      this.#waiters.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#socket.write(line);
    });
  }

  /** Registers a handler for a notification method; returns a function that removes it. */
  on(method: string, handler: NotificationHandler): () => void {
    let set = this.#handlers.get(method);
    if (set === undefined) {
      set = new Set();
      this.#handlers.set(method, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Calls `handler` once when the connection ends (at once if it already has); returns a remover. */
  onClose(handler: (error: Error) => void): () => void {
    if (this.#closedError !== null) {
      handler(this.#closedError);
      return () => undefined;
    }
    this.#closeHandlers.add(handler);
    return () => this.#closeHandlers.delete(handler);
  }

  close(): void {
    this.#socket.end();
    this.#fail(new DaemonUnreachableError('client closed'));
  }

  #receive(text: string): void {
    let message: { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: never };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (typeof message.method === 'string') {
      for (const handler of this.#handlers.get(message.method) ?? []) handler(message.params);
      return;
    }
    const waiter = typeof message.id === 'number' ? this.#waiters.get(message.id) : undefined;
    if (waiter === undefined) return;
    this.#waiters.delete(message.id as number);
    if (message.error !== undefined) waiter.reject(new RpcCallError(message.error));
    else waiter.resolve(message.result);
  }

  #fail(error: Error): void {
    if (this.#closedError !== null) return;
    this.#closedError = error;
    for (const waiter of this.#waiters.values()) waiter.reject(error);
    this.#waiters.clear();
    for (const handler of this.#closeHandlers) handler(error);
    this.#closeHandlers.clear();
  }
}
