import { chmod, lstat, unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { plainAnswer, sendAnswer } from './proxy-answer.js';
import { forwardRequest } from './proxy-forward.js';
import type { ProxyParts, ProxyPolicy } from './proxy-policy.js';
import { openTunnel } from './proxy-tunnel.js';

export type { ProxyPolicy } from './proxy-policy.js';

/** How an egress proxy listens, and what it does with requests that are not proxy requests. */
export interface ProxyOptions {
  /** The socket file's mode, set once it listens (the engine may run as another user). Default 0o600. */
  mode?: number;
  /** Requests in origin form (`POST /v1/messages`, not a proxy request): handed here (the model gateway, later). Absent: 400. */
  origin?: (request: IncomingMessage, response: ServerResponse) => void;
}

/** A listening egress proxy. */
export interface EgressProxy {
  readonly path: string;
  /** Stops listening, ends every open tunnel and request, removes the socket file; resolves when all is closed. */
  close(): Promise<void>;
}

/** Why an egress proxy could not listen: something other than a socket at its path, or the listen or chmod failed. */
export class EgressProxyError extends Error {
  override readonly name = 'EgressProxyError';
}

const NOT_A_SERVER = 'this is an egress proxy: send absolute-URI requests (GET http://host/path) or CONNECT host:port';

/**
 * An HTTP forward proxy (absolute-URI requests, plain http only) and CONNECT tunnels, on the
 * Unix socket `path`. Every target is put to `policy`, and only the address it gives is dialled.
 * A stale socket at `path` is replaced; anything else there is an EgressProxyError. No timer
 * runs but the dial's (DIAL_TIMEOUT_MS, proxy-policy.ts): idle connections stay open until a side
 * or close() ends them.
 */
export async function listenEgressProxy(path: string, policy: ProxyPolicy, options: ProxyOptions = {}): Promise<EgressProxy> {
  await removeStaleSocket(path);
  const sockets = new Set<Socket>();
  let closing: Promise<void> | null = null;
  const parts: ProxyParts = {
    policy,
    track(socket) {
      if (closing !== null) {
        socket.destroy();
        return;
      }
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    },
  };
  // Node's defaults would cut a request body that takes over 5 minutes to arrive, and idle keep-alive connections after 5 s.
  const server = createServer({ requestTimeout: 0, headersTimeout: 0, keepAliveTimeout: 0 });
  server.on('connection', (socket: Socket) => parts.track(socket));
  server.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => settle(openTunnel(request, socket, head, parts), socket));
  server.on('request', (request: IncomingMessage, response: ServerResponse) => settle(route(request, response, parts, options.origin), request.socket));
  await listen(server, path, options.mode ?? 0o600);
  const shutDown = async (): Promise<void> => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    const open = [...sockets];
    const ended = open.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
    for (const socket of open) socket.destroy();
    await Promise.all([stopped, ...ended]);
    await unlink(path).catch(ignoreMissing);
  };
  return {
    path,
    close: () => (closing ??= shutDown()),
  };
}

/** A request in origin form goes to `origin` (or gets a 400); any other is a proxy request. */
async function route(request: IncomingMessage, response: ServerResponse, parts: ProxyParts, origin: ProxyOptions['origin']): Promise<void> {
  const url = request.url ?? '';
  if (!url.startsWith('/') && url !== '*') return forwardRequest(request, response, parts);
  if (origin !== undefined) origin(request, response);
  else sendAnswer(response, plainAnswer(400, NOT_A_SERVER));
}

/** A failure of the proxy's own code ends the one connection it happened on, never the daemon. */
function settle(work: Promise<void>, socket: Socket): void {
  work.catch(() => socket.destroy());
}

async function removeStaleSocket(path: string): Promise<void> {
  const info = await lstat(path).catch(ignoreMissing);
  if (info === undefined) return;
  if (!info.isSocket()) throw new EgressProxyError(`${path} exists and is not a socket; refusing to replace it`);
  await unlink(path).catch(ignoreMissing);
}

async function listen(server: Server, path: string, mode: number): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // Bound under a umask, the socket is never more open than `mode`, not even until the chmod.
      const previous = process.umask(~mode & 0o777);
      try {
        server.listen(path, () => {
          server.off('error', reject);
          resolve();
        });
      } finally {
        process.umask(previous);
      }
    });
    await chmod(path, mode);
  } catch (error) {
    server.close();
    throw new EgressProxyError(`the egress proxy cannot listen on ${path}: ${(error as Error).message}`, { cause: error });
  }
  // A failed accept (EMFILE) is reported on the server; unheard, it would end the daemon.
  server.on('error', () => undefined);
}

function ignoreMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}
