import { lstatSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:net';
import { bindUnderUmask } from '../../rpc/bind-socket.js';

/**
 * Binds `server` to the Unix socket `path` before returning, with mode `mode` (bound under a
 * umask: rpc/bind-socket.ts). A socket left at the path by an earlier daemon is replaced; anything
 * else there (a link, a file) is an error, never followed. Throws when the socket cannot be bound.
 * A failed accept later (EMFILE) is reported on the server; it is heard here, so that it cannot
 * end the daemon.
 */
export function listenOnce(server: Server, path: string, mode: number): void {
  let found;
  try {
    found = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (found !== undefined) {
    if (!found.isSocket()) throw new Error(`${path} exists and is not a socket; refusing to replace it`);
    unlinkSync(path);
  }
  bindUnderUmask(server, path, mode);
  server.on('error', () => undefined);
}

/** Removes a socket file the daemon made; one already gone is fine. */
export function removeSocketFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
