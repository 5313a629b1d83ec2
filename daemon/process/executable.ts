import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** The search path a POSIX shell uses when the environment has no PATH (dash's default). */
const SHELL_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Where `exec` in a shell would find `file`: itself when it holds a slash, else the first
 * executable file of that name along `path` (an empty entry is `cwd`); null when none. The check
 * the kernel makes at exec time decides in the end; this is for telling a missing engine apart.
 */
export function findExecutable(file: string, path: string | undefined, cwd: string): string | null {
  const candidates = file.includes('/') ? [resolve(cwd, file)] : (path ?? SHELL_DEFAULT_PATH).split(':').map((dir) => resolve(cwd, dir, file));
  return candidates.find(isExecutableFile) ?? null;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
