import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname, sep } from 'node:path';
import { findExecutable } from './executable.js';
import { isWithin } from '../../rpc/within-folder.js';

/**
 * Where an engine is installed, found from its resolved command rather than guessed, so that its
 * sandbox can show it read-only: the program itself, and the interpreter its `#!` line names.
 */

/** An engine's program as its sandbox runs it. */
export interface Installed {
  /** The program's real path: what the sandbox starts (a link on the PATH may not be shown inside). */
  program: string;
  /** The folders (or, at the narrowest, files) shown read-only for it to run. */
  shown: string[];
}

/** Already shown to every sandbox: the system's programs. */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib64'];

/** How many bytes of a program are read for its `#!` line. */
const SHEBANG_BYTES = 256;

/**
 * The program `command` starts (looked up on `path`) and what must be shown for it to run; null
 * when it is not found. `refused` says whether a folder may not be shown (it is or holds one of
 * the daemon's own places): a narrower one is taken then, down to the file alone.
 */
export function installedProgram(command: string, path: string | undefined, cwd: string, refused: (folder: string) => boolean): Installed | null {
  const found = findExecutable(command, path, cwd);
  if (found === null) return null;
  const program = realpathSync(found);
  const shown = [installFolder(program, refused)];
  const interpreter = interpreterOf(program, path, cwd);
  if (interpreter !== null) shown.push(installFolder(interpreter, refused));
  return { program, shown: [...new Set(shown.filter((one) => !SYSTEM.some((system) => isWithin(system, one))))] };
}

/**
 * The folder a program is installed in: the outermost `node_modules` above it (an npm package's
 * dependencies are hoisted there), else the prefix whose `bin` holds it (`/opt/codex/bin/codex`:
 * `/opt/codex`), else its own folder; the narrower ones where the wider is refused; the file
 * itself at the last.
 */
export function installFolder(program: string, refused: (folder: string) => boolean): string {
  const parts = program.split(sep);
  const modules = parts.indexOf('node_modules');
  const folder = dirname(program);
  const candidates = [
    ...(modules > 0 ? [parts.slice(0, modules + 1).join(sep)] : []),
    ...(basename(folder) === 'bin' ? [dirname(folder)] : []),
    folder,
  ];
  return candidates.find((one) => one !== '/' && !refused(one)) ?? program;
}

/**
 * The interpreter a script's `#!` line starts, resolved: `#!/usr/bin/env node` looks `node` up on
 * the engine's PATH, `#!/usr/bin/env -S node --flag` too. Null for a binary or an unreadable file.
 */
export function interpreterOf(program: string, path: string | undefined, cwd: string): string | null {
  const line = firstLine(program);
  if (line === null || !line.startsWith('#!')) return null;
  const words = line.slice(2).trim().split(/\s+/).filter((word) => word !== '');
  const [first, ...rest] = words;
  if (first === undefined) return null;
  const named = basename(first) === 'env' ? rest.find((word) => !word.startsWith('-')) : first;
  if (named === undefined) return null;
  const found = findExecutable(named, path, cwd);
  if (found === null) return null;
  try {
    return realpathSync(found);
  } catch {
    return null;
  }
}

function firstLine(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(SHEBANG_BYTES);
    const read = readSync(fd, buffer, 0, SHEBANG_BYTES, 0);
    return buffer.subarray(0, read).toString('utf8').split('\n')[0] ?? null;
  } finally {
    closeSync(fd);
  }
}
