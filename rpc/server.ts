import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { lstat, mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Connection } from './connection.js';
import type { Dispatcher } from './dispatcher.js';

/** Where to listen: a socket path we create, or a listening descriptor inherited from systemd. */
export type ListenTarget = { kind: 'path'; path: string; mode: number } | { kind: 'fd'; fd: number };

/** The socket server: one Connection per client, every line handed to the dispatcher. */
export class RpcServer {
  readonly #dispatcher: Dispatcher<Connection>;
  readonly #server: Server;
  readonly #connections = new Set<Connection>();
  #nextId = 1;
  #ownedPath: string | null = null;

  constructor(dispatcher: Dispatcher<Connection>) {
    this.#dispatcher = dispatcher;
    this.#server = createServer((socket) => this.#accept(socket));
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  async listen(target: ListenTarget): Promise<void> {
    if (target.kind === 'fd') {
      await new Promise<void>((resolve, reject) => {
        this.#server.once('error', reject);
        this.#server.listen({ fd: target.fd }, () => resolve());
      });
      return;
    }
    await prepareSocketPath(target.path);
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      // The socket must never exist with wider permissions, even for an instant: bind under a umask.
      const previous = process.umask(~target.mode & 0o777);
      try {
        this.#server.listen(target.path, () => resolve());
      } finally {
        process.umask(previous);
      }
    });
    this.#ownedPath = target.path;
  }

  /** Stops accepting and closes every connection. Idempotent. */
  async close(): Promise<void> {
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
    const conn = new Connection(this.#nextId++, socket, (line, c) => void this.#handle(line, c));
    this.#connections.add(conn);
    conn.onClose(() => this.#connections.delete(conn));
  }

  async #handle(line: string, conn: Connection): Promise<void> {
    const response = await this.#dispatcher.handleLine(line, conn);
    if (response !== null) conn.send(response);
  }
}

/**
 * Makes the socket's folder (0700 when we create it) and removes a stale socket file, but only
 * when nothing answers on it: a live daemon's socket, or a file that is not a socket, is refused.
 */
async function prepareSocketPath(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
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
