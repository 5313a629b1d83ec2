import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:net';

/**
 * Binds `server` to the Unix socket `path` before returning, with mode `mode`. A socket left at
 * the path by an earlier daemon is replaced; anything else there (a link, a file) is an error,
 * never followed. Bound under a umask, the socket is never more open than `mode`, not even until
 * the chmod. Throws when the socket cannot be bound. A failed accept later (EMFILE) is reported on
 * the server; it is heard here, so that it cannot end the daemon.
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
  let failed: Error | null = null;
  // A failed bind is told on the next tick; the server is then not listening.
  server.on('error', (error) => (failed ??= error));
  const previous = process.umask(~mode & 0o777);
  try {
    server.listen(path);
  } finally {
    process.umask(previous);
  }
  if (!server.listening) throw new Error(failed === null ? 'it did not listen' : (failed as Error).message);
  chmodSync(path, mode);
}

/** Removes a socket file the daemon made; one already gone is fine. */
export function removeSocketFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
