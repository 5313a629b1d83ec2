import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { plainAnswer, sendAnswer } from './proxy-answer.js';
import { forwardRequest } from './proxy-forward.js';
import type { ProxyParts, ProxyPolicy } from './proxy-policy.js';
import { openTunnel } from './proxy-tunnel.js';
import { listenOnce, removeSocketFile } from './socket-file.js';

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
 * Unix socket `path`, listening before this returns (socket-file.ts: a stale socket at `path` is
 * replaced; anything else there is an EgressProxyError). Every target is put to `policy`, and
 * only the address it gives is dialled. No timer runs but the dial's (DIAL_TIMEOUT_MS,
 * proxy-policy.ts): idle connections stay open until a side or close() ends them.
 */
export function listenEgressProxy(path: string, policy: ProxyPolicy, options: ProxyOptions = {}): EgressProxy {
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
  try {
    listenOnce(server, path, options.mode ?? 0o600);
  } catch (error) {
    server.close();
    throw new EgressProxyError(`the egress proxy cannot listen on ${path}: ${(error as Error).message}`, { cause: error });
  }
  // Nothing listens at the path once close() returns, so that a new proxy may listen there at once.
  const shutDown = (): Promise<void> => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    const open = [...sockets];
    const ended = open.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
    for (const socket of open) socket.destroy();
    removeSocketFile(path);
    return Promise.all([stopped, ...ended]).then(() => undefined);
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
