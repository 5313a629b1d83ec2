import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { bindUnderUmask } from './bind-socket.js';
import { dirname } from 'node:path';
import { Activity, type ConnectionDeadlines } from './activity.js';
import { Connection, refuseSocket, type InboundBudget } from './connection.js';
import type { Dispatcher } from './dispatcher.js';
import { rpcError } from './errors.js';
import { checkFolderTrust, SOCKET_FOLDER } from './folder-trust.js';

/** Bytes of unfinished request lines all connections together may hold. */
export const MAX_UNFINISHED_BYTES_TOTAL = 32 * 1024 * 1024;

export interface ServerLimits extends ConnectionDeadlines {
  /**
   * Clients connected at once. One more makes room by closing the connection that has had
   * nothing in progress the longest (an unfinished line aside); when every one is busy, it is
   * answered `SERVER_BUSY` and closed.
   */
  maxConnections: number;
  /** See `MAX_UNFINISHED_BYTES_TOTAL`. */
  maxUnfinishedBytes?: number;
}

/** The server's time: `now` for the deadlines, a timer for the rounds that check them. */
export interface ServerClock {
  now(): Date;
  setTimer(delayMs: number, callback: () => void): { cancel(): void };
}

/** The longest pause between two checks of the connections' deadlines. */
const DEADLINE_CHECK_MS = 1000;

/** Where to listen: a socket path we create, or a listening descriptor inherited from systemd. */
export type ListenTarget = { kind: 'path'; path: string; mode: number } | { kind: 'fd'; fd: number };

/** The socket server: one Connection per client, every line handed to the dispatcher. */
export class RpcServer {
  readonly #dispatcher: Dispatcher<Connection>;
  readonly #server: Server;
  readonly #connections = new Set<Connection>();
  readonly #limits: ServerLimits;
  readonly #budget: SharedBudget;
  readonly #onFault: (error: unknown) => void;
  readonly #clock: ServerClock;
  #nextId = 1;
  #ownedPath: string | null = null;
  #checks: { cancel(): void } | null = null;

  /** `onFault` hears of errors no request could be answered for (they are answered INTERNAL_ERROR). */
  constructor(dispatcher: Dispatcher<Connection>, limits: ServerLimits, onFault: (error: unknown) => void, clock: ServerClock) {
    this.#dispatcher = dispatcher;
    this.#limits = limits;
    this.#onFault = onFault;
    this.#clock = clock;
    this.#budget = new SharedBudget(limits.maxUnfinishedBytes ?? MAX_UNFINISHED_BYTES_TOTAL);
    // Half-open: a client that ends its side still gets the answers to what it sent.
    this.#server = createServer({ allowHalfOpen: true }, (socket) => this.#accept(socket));
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Listens, and checks the connections' deadlines from then on. */
  async listen(target: ListenTarget): Promise<void> {
    await this.#listen(target);
    // A failed accept (EMFILE) is told on the server: a fault to report, never the daemon's end.
    this.#server.on('error', (error) => this.#onFault(error));
    this.#checkLater();
  }

  async #listen(target: ListenTarget): Promise<void> {
    if (target.kind === 'fd') {
      await new Promise<void>((resolve, reject) => {
        this.#server.once('error', reject);
        this.#server.listen({ fd: target.fd }, () => resolve());
      });
      return;
    }
    await prepareSocketPath(target.path, target.mode);
    bindUnderUmask(this.#server, target.path, target.mode);
    this.#ownedPath = target.path;
  }

  /** Stops accepting and closes every connection. Idempotent. */
  async close(): Promise<void> {
    this.#checks?.cancel();
    this.#checks = null;
    for (const conn of this.#connections) conn.close();
    await new Promise<void>((resolve) => {
      if (!this.#server.listening) resolve();
      else this.#server.close(() => resolve());
    });
  }

  /** Removes the socket file if this server created it (never an inherited one). Idempotent. */
  async removeSocketFile(): Promise<void> {
    if (this.#ownedPath !== null) {
      await unlink(this.#ownedPath).catch(() => undefined);
      this.#ownedPath = null;
    }
  }

  #accept(socket: Socket): void {
    if (this.#connections.size >= this.#limits.maxConnections && !this.#makeRoom()) {
      refuseSocket(socket, 'SERVER_BUSY', `${this.#limits.maxConnections} clients are connected (max_connections), each with a request or a subscription in progress; retry later`);
      return;
    }
    const activity = new Activity(() => this.#clock.now().getTime());
    const conn = new Connection(this.#nextId++, socket, (line, c) => this.#handle(line, c), this.#budget, activity);
    this.#connections.add(conn);
    conn.onClose(() => this.#connections.delete(conn));
  }

  /** Closes the connection that has had nothing in progress the longest; false when every one is busy. */
  #makeRoom(): boolean {
    let spare: Connection | null = null;
    for (const conn of this.#connections) {
      const since = conn.activity.spareSince;
      if (since !== null && (spare === null || since < (spare.activity.spareSince as number))) spare = conn;
    }
    spare?.refuse('SERVER_BUSY', `closed to make room for another client: ${this.#limits.maxConnections} clients are connected (max_connections), and this one had nothing in progress`);
    return spare !== null;
  }

  /** A connection past a deadline: an unfinished line gets REQUEST_TIMEOUT, one idle too long is closed. */
  #checkDeadlines(): void {
    const now = this.#clock.now().getTime();
    for (const conn of this.#connections) {
      const overdue = conn.activity.overdue(now, this.#limits);
      if (overdue === 'line') conn.refuse('REQUEST_TIMEOUT', `a request line must end within ${this.#limits.lineTimeoutMs / 1000} s of its first byte (line_timeout_sec); the connection is closed`);
      else if (overdue === 'idle') conn.close();
    }
  }

  #checkLater(): void {
    const { lineTimeoutMs, idleTimeoutMs } = this.#limits;
    const every = Math.max(1, Math.min(DEADLINE_CHECK_MS, lineTimeoutMs / 4, idleTimeoutMs > 0 ? idleTimeoutMs / 4 : DEADLINE_CHECK_MS));
    this.#checks = this.#clock.setTimer(every, () => {
      this.#checkDeadlines();
      if (this.#checks !== null) this.#checkLater();
    });
  }

  /** Never rejects: whatever goes wrong is reported and answered, and the server keeps serving. */
  async #handle(line: string, conn: Connection): Promise<void> {
    try {
      const answer = await this.#dispatcher.handleLine(line, conn, (task) => conn.run(task));
      if (answer !== null) conn.sendLine(`${answer}\n`);
    } catch (error) {
      this.#onFault(error);
      conn.send({ jsonrpc: '2.0', id: null, error: rpcError('INTERNAL_ERROR', 'internal error') });
    }
  }
}

/** The unfinished-line bytes of every connection, against one limit. */
class SharedBudget implements InboundBudget {
  readonly #limit: number;
  readonly #held = new Map<Connection, number>();
  #total = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  hold(conn: Connection, bytes: number): boolean {
    this.release(conn);
    if (bytes > 0) this.#held.set(conn, bytes);
    this.#total += bytes;
    return this.#total <= this.#limit;
  }

  release(conn: Connection): void {
    this.#total -= this.#held.get(conn) ?? 0;
    this.#held.delete(conn);
  }
}

/**
 * The mode of a socket folder the daemon creates: the owner's, plus search (and read) for the
 * group or others when the socket lets them in (`socket_mode` "0660" → 0750), since a socket
 * in a folder they cannot enter is out of their reach whatever its own mode.
 */
export function socketFolderMode(socketMode: number): number {
  return 0o700 | ((socketMode & 0o060) !== 0 ? 0o050 : 0) | ((socketMode & 0o006) !== 0 ? 0o005 : 0);
}

/**
 * Makes the socket's folder (see `socketFolderMode`; a folder that exists is left as it is),
 * checks that no other user can change it or a folder above it (`checkFolderTrust`), and
 * removes a stale socket file, but only when nothing answers on it: a live daemon's socket, or a
 * file that is not a socket, is refused.
 */
async function prepareSocketPath(path: string, socketMode: number): Promise<void> {
  const folder = dirname(path);
  const folderMode = socketFolderMode(socketMode);
  // mkdir applies the umask (systemd's UMask=0077 would take the group's bits away): set the mode of the folder we made.
  if ((await mkdir(folder, { recursive: true, mode: folderMode })) !== undefined) await chmod(folder, folderMode);
  await checkFolderTrust(folder, SOCKET_FOLDER);
  const info = await lstat(path).catch(() => null);
  if (info === null) return;
  if (!info.isSocket()) throw new Error(`${path} exists and is not a socket; refusing to replace it`);
  if (await answers(path)) throw new Error(`another daemon is already listening on ${path}`);
  await unlink(path);
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
