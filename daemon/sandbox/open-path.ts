import { closeSync, constants, fstatSync, openSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/**
 * Opening what a sandbox shows, once (docs/sandbox.md, "Opened once"): the daemon resolves a
 * path's links a single time, then opens the resolved path one component at a time without
 * following any link, and hands bubblewrap the open descriptor. A component swapped for a link
 * after the resolution makes the open fail; a rename after it changes nothing, since what is
 * bound is the object opened (bubblewrap checks the mount against the descriptor).
 */

/** Linux's O_PATH: a descriptor that names an object without reading it (no read permission needed). */
const O_PATH = 0o10000000;
const WALK = O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const LAST = O_PATH | constants.O_NOFOLLOW;

/** An object opened for a sandbox: its descriptor, the path it had when opened, and what it is. */
export interface OpenedPath {
  fd: number;
  real: string;
  kind: 'dir' | 'file';
}

/** Why a path could not be opened: gone, a link where none was, or not a file or folder. */
export class OpenPathError extends Error {
  override readonly name = 'OpenPathError';
}

/** Opens `path` (absolute) after resolving its links once; throws OpenPathError. */
export function openResolved(path: string): OpenedPath {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    throw new OpenPathError(`${path} does not exist (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  return openNoFollow(real);
}

/**
 * Opens the absolute path `real`, each component without following a link: a link anywhere in
 * it (put there since it was resolved) is refused. Throws OpenPathError.
 */
export function openNoFollow(real: string): OpenedPath {
  if (!isAbsolute(real)) throw new OpenPathError(`${real} is not an absolute path`);
  const parts = real.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new OpenPathError(`${real} is not a resolved path`);
  let fd = openSync('/', WALK);
  try {
    for (const [i, part] of parts.entries()) {
      const next = openAt(fd, part, i === parts.length - 1 ? LAST : WALK, real);
      closeSync(fd);
      fd = next;
    }
    // O_PATH|O_NOFOLLOW opens a link itself rather than refusing it: what was opened tells.
    const stat = fstatSync(fd);
    if (stat.isSymbolicLink()) throw new OpenPathError(`${real} changed while it was opened: it is now a link`);
    if (!stat.isDirectory() && !stat.isFile()) throw new OpenPathError(`${real} is neither a file nor a folder`);
    return { fd, real, kind: stat.isDirectory() ? 'dir' : 'file' };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Where the kernel says an open descriptor's object lies now. */
export function pathOfFd(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}

/** Opens `name` in the folder open as `dirFd`, as openat(2) would (Node has no openat: the folder's /proc entry stands in). */
function openAt(dirFd: number, name: string, flags: number, whole: string): number {
  try {
    return openSync(`/proc/self/fd/${dirFd}/${name}`, flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'ELOOP') throw new OpenPathError(`${whole} changed while it was opened: ${name} is now a link or not a folder`);
    throw new OpenPathError(`${whole} cannot be opened (${code ?? 'error'} at ${name})`);
  }
}

