import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where the systemd units put the daemon's socket (systemd/skilld.socket). */
export const SYSTEM_SOCKET = '/run/skilld/skilld.sock';

/** Where the socket path came from. */
export type SocketSource = 'flag' | 'SKILLD_SOCKET' | 'runtime_dir' | 'fallback' | 'system';

export interface SocketChoice {
  path: string;
  source: SocketSource;
  /** With `system`: the per-user default that does not exist. */
  absent?: string;
}

/** What the lookup depends on besides the flag; tests pass their own. */
export interface SocketLookup {
  env?: NodeJS.ProcessEnv;
  uid?: number;
  /** The system socket to try when the per-user default is absent. */
  systemSocket?: string;
  exists?: (path: string) => boolean;
}

/**
 * The socket skillctl talks to: `--socket`, else `SKILLD_SOCKET`, else the daemon's own default,
 * `$XDG_RUNTIME_DIR/skilld/skilld.sock` or `/tmp/skilld-<uid>/skilld.sock`; when that default does
 * not exist and the system socket does (skilld under systemd), the system socket. Empty values
 * count as unset.
 */
export function chooseSocket(flag: string | undefined, lookup: SocketLookup = {}): SocketChoice {
  const { env = process.env, uid = process.getuid?.() ?? 0, systemSocket = SYSTEM_SOCKET, exists = existsSync } = lookup;
  if (flag !== undefined && flag !== '') return { path: resolve(flag), source: 'flag' };
  const fromEnv = env['SKILLD_SOCKET'];
  if (fromEnv !== undefined && fromEnv !== '') return { path: resolve(fromEnv), source: 'SKILLD_SOCKET' };
  const runtime = env['XDG_RUNTIME_DIR'];
  const own: SocketChoice = runtime !== undefined && runtime !== '' ? { path: join(runtime, 'skilld', 'skilld.sock'), source: 'runtime_dir' } : { path: `/tmp/skilld-${uid}/skilld.sock`, source: 'fallback' };
  if (!exists(own.path) && exists(systemSocket)) return { path: systemSocket, source: 'system', absent: own.path };
  return own;
}

/** The socket path alone (see `chooseSocket`). */
export function socketPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, uid: number = process.getuid?.() ?? 0): string {
  return chooseSocket(flag, { env, uid }).path;
}

/** Where the socket came from, in words: the second line of `skillctl socket`. */
export function sourceText(choice: SocketChoice, lookup: Pick<SocketLookup, 'env' | 'uid'> = {}): string {
  const { env = process.env, uid = process.getuid?.() ?? 0 } = lookup;
  switch (choice.source) {
    case 'flag':
      return 'from --socket';
    case 'SKILLD_SOCKET':
      return 'from $SKILLD_SOCKET';
    case 'runtime_dir':
      return `the per-user default in $XDG_RUNTIME_DIR (${env['XDG_RUNTIME_DIR'] ?? ''})`;
    case 'fallback':
      return `the per-user default when $XDG_RUNTIME_DIR is unset (uid ${uid})`;
    case 'system':
      return `the system socket (skilld under systemd), as the per-user default ${choice.absent ?? ''} does not exist`;
  }
}
