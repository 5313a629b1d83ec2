import { join, resolve } from 'node:path';

/**
 * The socket skillctl talks to: `--socket`, else `SKILLD_SOCKET`, else the daemon's default,
 * `$XDG_RUNTIME_DIR/skilld/skilld.sock` or `/tmp/skilld-<uid>/skilld.sock`. Empty values count as unset.
 */
export function socketPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, uid: number = process.getuid?.() ?? 0): string {
  if (flag !== undefined && flag !== '') return resolve(flag);
  const fromEnv = env['SKILLD_SOCKET'];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  const runtime = env['XDG_RUNTIME_DIR'];
  return runtime !== undefined && runtime !== '' ? join(runtime, 'skilld', 'skilld.sock') : `/tmp/skilld-${uid}/skilld.sock`;
}
