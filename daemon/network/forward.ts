import { connect, createServer, type Server, type Socket } from 'node:net';
import { listenOnce, removeSocketFile } from './socket-file.js';

/** A forwarded port of the host's loopback: each connection to its socket goes on to `host:port` here. */
export interface Forward {
  close(): Promise<void>;
}

/**
 * Listens on the Unix socket `path` (mode `mode`) and leads each connection to `host:port` on
 * the host's loopback (docs/network.md, "Forwarded loopback"): a local model server reached from
 * a job at the same address it has on the host. Bound before this returns; nothing listens at
 * the path once `close` returns.
 */
export function listenForward(path: string, host: string, port: number, mode: number): Forward {
  const open = new Set<Socket>();
  const server: Server = createServer((inside) => {
    const out = connect({ host, port });
    open.add(inside).add(out);
    const end = (): void => {
      inside.destroy();
      out.destroy();
      open.delete(inside);
      open.delete(out);
    };
    inside.on('error', end).on('close', end);
    out.on('error', end).on('close', end);
    inside.pipe(out).pipe(inside);
  });
  listenOnce(server, path, mode);
  return {
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      removeSocketFile(path);
      return closed;
    },
  };
}
