import { closeSync, constants, lchownSync, lstatSync, mkdirSync, openSync, rmdirSync, unlinkSync } from 'node:fs';
import { OpenPathError } from './open-path.js';

/**
 * The places of what a sandbox shows inside a folder of the job's own (its home), made by the
 * daemon before the sandbox starts: bubblewrap would make a missing one itself, following any
 * link the job left on the way (as root, out of every sandbox). Each step is taken from the
 * folder's open descriptor, never following a link: a link or a file in the way is removed (the
 * job's own), and what is made is given to the engine's user. No process of the job runs then:
 * one engine process a job at a time, and a sandbox's processes end with it.
 */

const O_PATH = 0o10000000;
const STEP = O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Who owns what is made: the engine's user where it runs as another than the daemon's. */
export type Owner = { uid: number; gid: number } | null;

/** Makes `relative` (a path inside the folder open as `dirFd`) a folder, or a file when `file`. */
export function makePlace(dirFd: number, relative: string, file: boolean, owner: Owner): void {
  const parts = relative.split('/').filter((part) => part !== '');
  let fd = dirFd;
  try {
    for (const [i, part] of parts.entries()) {
      const at = `/proc/self/fd/${fd}/${part}`;
      const last = i === parts.length - 1;
      clearWay(at, last && file);
      if (last && file) {
        makeFile(at, owner);
        break;
      }
      makeFolder(at, owner);
      const next = openSync(at, STEP);
      if (fd !== dirFd) closeSync(fd);
      fd = next;
    }
  } catch (error) {
    if (error instanceof OpenPathError) throw error;
    throw new OpenPathError(`cannot make the place of ${relative} in the job's home: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  } finally {
    if (fd !== dirFd) closeSync(fd);
  }
}

/** Removes what is at `at` unless it is what belongs there (a folder, or a file when `file`); a folder that is not empty stays, and fails the start. */
function clearWay(at: string, file: boolean): void {
  let stat;
  try {
    stat = lstatSync(at);
  } catch {
    return;
  }
  if (file ? stat.isFile() : stat.isDirectory()) return;
  if (stat.isDirectory()) {
    try {
      rmdirSync(at);
    } catch {
      throw new OpenPathError(`the job's home holds a folder that is not empty where the sandbox shows a file (${at.split('/').pop() ?? ''})`);
    }
    return;
  }
  unlinkSync(at);
}

function makeFolder(at: string, owner: Owner): void {
  try {
    mkdirSync(at, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  if (owner !== null) lchownSync(at, owner.uid, owner.gid);
}

function makeFile(at: string, owner: Owner): void {
  let fd: number;
  try {
    // O_EXCL: never through a link, never over what is there.
    fd = openSync(at, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  closeSync(fd);
  if (owner !== null) lchownSync(at, owner.uid, owner.gid);
}
