import type { Server } from 'node:net';

/**
 * Binds `server` to the Unix socket `path` before returning, under a umask, so that the socket
 * never exists with wider permissions than `mode`, not even for an instant. Throws when it cannot
 * be bound (the error node tells on the next tick is heard here, and its words are in the throw).
 */
export function bindUnderUmask(server: Server, path: string, mode: number): void {
  let failed: Error | null = null;
  const heard = (error: Error): void => {
    failed ??= error;
  };
  server.on('error', heard);
  const previous = process.umask(~mode & 0o777);
  try {
    server.listen(path);
  } finally {
    process.umask(previous);
  }
  if (server.listening) {
    server.off('error', heard);
    return;
  }
  throw new Error(`cannot listen on ${path}${failed === null ? '' : `: ${(failed as Error).message}`}`);
}
