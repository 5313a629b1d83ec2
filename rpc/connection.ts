import { peerCredentials, type PeerCredentials } from './peer-credentials.js';
import type { Socket } from 'node:net';
import type { Activity } from './activity.js';
import { LineSplitter, MAX_RPC_LINE_BYTES, encodeLine } from './framing.js';
import { rpcError, type ErrorCode } from './errors.js';
import { Limiter } from './limiter.js';

/** A buffered-but-unsent backlog above this closes the connection: a slow reader must not grow memory. */
export const MAX_CONNECTION_BACKLOG_BYTES = 16 * 1024 * 1024;
/** What is still read (and dropped) from a refused connection before it is cut, so that a client busy writing gets its error line. */
export const REFUSED_READ_BYTES = 64 * 1024;
/** How long a refused connection is kept for its client to read the error line; then it is cut, whatever the client does. */
export const REFUSED_LINGER_MS = 10_000;
/** Requests of one connection (batch items counted one by one) that run at once; reading pauses beyond. */
export const MAX_REQUESTS_IN_FLIGHT = 16;

/** Bytes of unfinished request lines, shared by every connection of a server. */
export interface InboundBudget {
  /** Records that `conn` now holds `bytes`; false when the shared budget would be exceeded. */
  hold(conn: Connection, bytes: number): boolean;
  release(conn: Connection): void;
}

/** Handles one complete request line; resolves once its answer (if any) was handed to `send`. */
export type LineHandler = (line: string, conn: Connection) => Promise<void>;

/**
 * One client connection: reads request lines, writes responses and notifications. When the
 * client ends its side (a script's `echo … | socat`), every request already read is still
 * answered, then the connection is closed.
 */
export class Connection {
  readonly id: number;
  /** Who connected, as the kernel says (SO_PEERCRED); null where it cannot be read. */
  readonly peer: PeerCredentials | null;
  readonly #socket: Socket;
  readonly #closeHandlers: Array<() => void> = [];
  readonly #limiter: Limiter;
  readonly #budget: InboundBudget;
  readonly #activity: Activity;
  readonly #drainWaiters: Array<() => void> = [];
  #linesInFlight = 0;
  #inputEnded = false;
  #closed = false;

  /** `activity` is told what the connection does, for its deadlines (see RpcServer). */
  constructor(id: number, socket: Socket, onLine: LineHandler, budget: InboundBudget, activity: Activity) {
    this.id = id;
    this.peer = peerCredentials(socket);
    this.#socket = socket;
    this.#budget = budget;
    this.#activity = activity;
    this.#limiter = new Limiter(MAX_REQUESTS_IN_FLIGHT, (busy) => {
      activity.reading(!busy);
      if (busy) socket.pause();
      else socket.resume();
    });
    const splitter = new LineSplitter(MAX_RPC_LINE_BYTES, {
      line: (text) => {
        if (!this.#closed && text.trim() !== '') this.#take(onLine(text, this));
      },
      overflow: () => this.refuse('REQUEST_TOO_LARGE', `request line exceeds ${MAX_RPC_LINE_BYTES} bytes`),
    });
    socket.on('data', (chunk: Buffer) => {
      if (this.#closed) return;
      splitter.push(chunk);
      activity.lineOpen(splitter.buffered > 0);
      if (!this.#closed && !budget.hold(this, splitter.buffered)) this.refuse('SERVER_BUSY', 'the daemon holds too many unfinished request lines; retry later');
    });
    socket.on('end', () => {
      if (this.#closed) return;
      splitter.end();
      this.#inputEnded = true;
      this.#closeWhenAnswered();
    });
    socket.on('error', () => this.#destroy());
    socket.on('close', () => this.#markClosed());
    socket.on('drain', () => this.#wakeDrainWaiters());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes written to the client that it has not taken yet. */
  get backlog(): number {
    return this.#socket.writableLength;
  }

  /** Resolves once the client has taken what was written so far, or the connection closed. */
  drained(): Promise<void> {
    if (this.#closed || !this.#socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** What the connection is doing, as its deadlines see it. */
  get activity(): Activity {
    return this.#activity;
  }

  /** Keeps the connection from counting as idle (a subscription waits for events) until the returned function is called. */
  hold(): () => void {
    return this.#activity.hold();
  }

  /** Answers with one error line (`code`, `message`) and closes the connection (see `refuseSocket`). */
  refuse(code: ErrorCode, message: string): void {
    if (this.#closed) return;
    this.#markClosed();
    refuseSocket(this.#socket, code, message);
  }

  /** Runs one request's work within this connection's limit on requests in flight. */
  run<T>(task: () => Promise<T>): Promise<T> {
    return this.#limiter.run(task);
  }

  /** Writes one message; drops the connection instead of buffering without bound. */
  send(message: unknown): void {
    this.sendLine(encodeLine(message));
  }

  /** Writes one already encoded line (with its `\n`). */
  sendLine(line: string): void {
    if (this.#closed) return;
    this.#socket.write(line);
    if (this.#socket.writableLength > MAX_CONNECTION_BACKLOG_BYTES) this.#destroy();
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  onClose(handler: () => void): void {
    if (this.#closed) handler();
    else this.#closeHandlers.push(handler);
  }

  /** Ends the connection after what was written so far; answers still being made are dropped. */
  close(): void {
    if (this.#closed) return;
    this.#socket.end();
    this.#markClosed();
  }

  #take(handling: Promise<void>): void {
    this.#linesInFlight += 1;
    this.#activity.requestStarted();
    const done = (): void => {
      this.#linesInFlight -= 1;
      this.#activity.requestEnded();
      this.#closeWhenAnswered();
    };
    handling.then(done, done);
  }

  #closeWhenAnswered(): void {
    if (this.#inputEnded && this.#linesInFlight === 0) this.close();
  }

  #destroy(): void {
    this.#socket.destroy();
    this.#markClosed();
  }

  #markClosed(): void {
    if (this.#closed && this.#closeHandlers.length === 0) return;
    this.#closed = true;
    this.#budget.release(this);
    this.#wakeDrainWaiters();
    const handlers = this.#closeHandlers.splice(0);
    for (const handler of handlers) handler();
  }

  #wakeDrainWaiters(): void {
    for (const wake of this.#drainWaiters.splice(0)) wake();
  }
}

/**
 * Answers a connection with one error line and ends it. What the client goes on sending is read
 * and dropped, up to `REFUSED_READ_BYTES`, so that a client still writing a request gets the
 * answer (its write does not fail first); past that the socket is destroyed, and a client that
 * was writing more may see its write fail before it reads the answer. After REFUSED_LINGER_MS it
 * is cut in any case: a client that neither reads nor closes holds nothing for long.
 */
export function refuseSocket(socket: Socket, code: ErrorCode, message: string): void {
  let dropped = 0;
  const cut = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
  cut.unref();
  socket.once('close', () => clearTimeout(cut));
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > REFUSED_READ_BYTES) socket.destroy();
  });
  socket.resume();
  socket.end(encodeLine({ jsonrpc: '2.0', id: null, error: rpcError(code, message) }));
}
