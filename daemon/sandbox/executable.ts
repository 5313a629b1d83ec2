import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** The search path a POSIX shell uses when the environment has no PATH (dash's default). */
const SHELL_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The error `exec` in a shell would meet starting `file` (itself when it holds a slash, else the
 * first executable file of that name along `path`, an empty entry being `cwd`): null when it would
 * start, `EACCES` when only files that cannot be executed are there, else `ENOENT`. The kernel has
 * the last word at exec time; this is for telling a missing engine apart before a shell hides it.
 */
export function execError(file: string, path: string | undefined, cwd: string): 'ENOENT' | 'EACCES' | null {
  let error: 'ENOENT' | 'EACCES' = 'ENOENT';
  for (const candidate of candidatesOf(file, path, cwd)) {
    const kind = kindOf(candidate);
    if (kind === 'executable') return null;
    if (kind === 'other') error = 'EACCES';
  }
  return error;
}

/** The file `exec` in a shell would start for `file` (see `execError`), or null when none would start. */
export function findExecutable(file: string, path: string | undefined, cwd: string): string | null {
  return candidatesOf(file, path, cwd).find((candidate) => kindOf(candidate) === 'executable') ?? null;
}

function candidatesOf(file: string, path: string | undefined, cwd: string): string[] {
  return file.includes('/') ? [resolve(cwd, file)] : (path ?? SHELL_DEFAULT_PATH).split(':').map((dir) => resolve(cwd, dir, file));
}

function kindOf(path: string): 'executable' | 'other' | 'none' {
  try {
    if (!statSync(path).isFile()) return 'other';
  } catch {
    return 'none';
  }
  try {
    accessSync(path, constants.X_OK);
    return 'executable';
  } catch {
    return 'other';
  }
}
