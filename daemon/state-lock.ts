import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file's name in the state folder: one daemon per state folder. */
export const STATE_LOCK_FILE = 'skilld.lock';

/** What the lock file tells of the daemon that holds it; informative only (the lock is the kernel's). */
export interface LockHolder {
  pid: number;
  socket: string;
}

/** `daemon/status.state_lock`: whether this daemon holds its state folder's lock, and why not. */
export interface StateLockView {
  path: string;
  held: boolean;
  reason: string | null;
}

/** The state folder's lock as taken at start; `release()` (idempotent) lets the next daemon take it. */
export interface StateLock {
  readonly view: StateLockView;
  /** Why the holder's pid and socket could not be written into the lock file (the lock holds all the same), or null. */
  readonly recordProblem: string | null;
  release(): void;
}

/** libc's `flock(2)`: 0 when it succeeded, else the errno it failed with. */
export interface Flock {
  call(fd: number, operation: number): number;
  /** The platform's errno values by name. */
  errno: Record<string, number>;
}

/** Another daemon holds the state folder's lock: this one must not start on it. */
export class StateDirLockedError extends Error {
  override readonly name = 'StateDirLockedError';
  readonly code = 'STATE_DIR_LOCKED';
  constructor(readonly stateDir: string, readonly holder: LockHolder | null) {
    const who = holder === null ? 'its pid and socket are not written yet' : `pid ${holder.pid}, socket ${holder.socket}`;
    super(`the state folder ${stateDir} is in use by another skilld (${who}); one daemon per state folder`);
  }
}

const LOCK_EX = 2;
const LOCK_NB = 4;

/** libc's `flock` through koffi, imported here and only here, so that nothing else loads the FFI. */
export async function loadFlock(): Promise<Flock> {
  const koffi = (await import('koffi')).default;
  const flock = koffi.load('libc.so.6').func('int flock(int fd, int operation)');
  return {
    // koffi keeps the errno the call left, before any other code can change it.
    call: (fd, operation) => ((flock(fd, operation) as number) === 0 ? 0 : koffi.errno()),
    errno: koffi.os.errno,
  };
}

/**
 * Takes the exclusive lock of `stateDir` (`flock(LOCK_EX | LOCK_NB)` on `skilld.lock`, opened
 * without following links, made 0600), writes `holder` into it, and keeps the descriptor open:
 * the kernel lets the lock go when the process ends, however it ends. The descriptor is closed
 * on exec, so engines and their keepers never hold it. Throws `StateDirLockedError` when another
 * process holds it, and an error naming the file when it is a link or not a plain file. Where
 * `flock` cannot be called (`load` fails) the lock is not held, and the view says why.
 */
export async function takeStateLock(stateDir: string, holder: LockHolder, load: () => Promise<Flock> = loadFlock): Promise<StateLock> {
  const path = join(stateDir, STATE_LOCK_FILE);
  const fd = openLockFile(path);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    closeSync(fd);
  };
  const unheld = (reason: string): StateLock => {
    release();
    return { view: { path, held: false, reason }, recordProblem: null, release };
  };
  let flock: Flock;
  try {
    flock = await load();
  } catch (error) {
    return unheld(`flock cannot be called here: ${(error as Error).message}`);
  }
  const failed = lockOrErrno(flock, fd);
  if (failed === flock.errno['EWOULDBLOCK'] || failed === flock.errno['EAGAIN']) {
    const found = readHolder(fd);
    release();
    throw new StateDirLockedError(stateDir, found);
  }
  if (failed !== 0) return unheld(`flock failed: ${errnoName(flock, failed)}`);
  return { view: { path, held: true, reason: null }, recordProblem: writeHolder(fd, holder), release };
}

/** The lock file's descriptor: a link in its place is refused, never followed, as is anything but a plain file of one name. */
function openLockFile(path: string): number {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted in its place cannot hold the start up.
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new Error(`the state folder's lock file ${path} is a symbolic link; it is never followed: remove it`, { cause: error });
    throw new Error(`cannot open the state folder's lock file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const info = fstatSync(fd);
  // Its content is rewritten at each start: a second name would let that write reach another file.
  const why = !info.isFile() ? 'it is not a plain file' : info.nlink > 1 ? `it has ${info.nlink} names (hard links)` : null;
  if (why !== null) {
    closeSync(fd);
    throw new Error(`refusing the state folder's lock file ${path}: ${why}; remove it`);
  }
  return fd;
}

/** `flock(LOCK_EX | LOCK_NB)`, again when a signal interrupted it: 0, or the errno it failed with. */
function lockOrErrno(flock: Flock, fd: number): number {
  for (;;) {
    const failed = flock.call(fd, LOCK_EX | LOCK_NB);
    if (failed !== flock.errno['EINTR']) return failed;
  }
}

/** Replaces the file's content with the holder's pid and socket; why it could not (a full disk), or null. */
function writeHolder(fd: number, holder: LockHolder): string | null {
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${JSON.stringify(holder)}\n`, 0);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The holder the file names, or null: not written yet (it is written just after the lock is taken), or unreadable. */
function readHolder(fd: number): LockHolder | null {
  const buffer = Buffer.alloc(8192);
  try {
    const text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
    const found = JSON.parse(text) as Partial<LockHolder>;
    return typeof found.pid === 'number' && typeof found.socket === 'string' ? { pid: found.pid, socket: found.socket } : null;
  } catch {
    return null;
  }
}

function errnoName(flock: Flock, errno: number): string {
  return Object.entries(flock.errno).find(([, value]) => value === errno)?.[0] ?? `errno ${errno}`;
}
