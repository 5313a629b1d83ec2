import { closeSync, constants, lchownSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, writeSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isWithin } from '../../rpc/within-folder.js';
import type { EngineHome } from './engine-homes.js';
import { makePlace, type Owner } from './mount-points.js';
import type { Placed } from './plan.js';

/** In a job's run folder: its own home, shown at the engine's HOME. */
const HOME = 'home';
/** In a job's run folder: its own engine home, when the engine's home folder is not below HOME. */
const ENGINE_HOME = 'engine-home';

const O_PATH = 0o10000000;

/** The homes of a job's own, as its sandbox shows them. */
export interface JobHomes {
  home: Placed | null;
  engineHome: Placed | null;
}

/**
 * The homes of a job's own, in the run folder `runRoot`, shown in place of the engine's HOME and
 * home folder, so that what the engine writes there (sessions, chats, caches, shell history)
 * stays the job's own, and a later turn of the job finds it again. Made with the job's first
 * engine process, and only then are the engine's state files (`EngineHome.copied`) copied in: a
 * home the job has had is never written by the daemon again (a link the job left there leads
 * the daemon nowhere). Given to `owner`, the engine's user, where that is not the daemon's.
 */
export function jobHomes(engine: EngineHome, runRoot: string, owner: Owner): JobHomes {
  const home = engine.home === '/' || engine.home === '' ? null : { path: engine.home, by: join(runRoot, HOME) };
  const engineHome = home !== null && isWithin(home.path, engine.folder) ? null : { path: engine.folder, by: join(runRoot, ENGINE_HOME) };
  const fresh = [home, engineHome].filter((one): one is Placed => one !== null && makeOwn(one.by, owner));
  for (const placed of [home, engineHome]) if (placed !== null) claim(placed.by, owner);
  // The engine's home folder in the job's home, and the state files copied in where that is new.
  const holder = engineHome ?? home;
  if (holder === null) return { home, engineHome };
  const folder = relative(holder.path, engine.folder);
  if (folder !== '') withFolder(holder.by, (fd) => makePlace(fd, folder, false, owner));
  if (fresh.includes(holder)) for (const file of engine.copied) seed(file, holder, owner);
  return { home, engineHome };
}

/**
 * Gives a folder of the job's own to `owner` where it is not theirs (a job begun before engines
 * ran as another user): every entry below, by `lchown`, never following a link.
 */
export function claim(folder: string, owner: Owner): void {
  if (owner === null) return;
  let stat;
  try {
    stat = lstatSync(folder);
  } catch {
    return;
  }
  if (stat.isSymbolicLink() || (stat.uid === owner.uid && stat.gid === owner.gid)) return;
  lchownSync(folder, owner.uid, owner.gid);
  if (!stat.isDirectory()) return;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) claim(path, owner);
    else lchownSync(path, owner.uid, owner.gid);
  }
}

/** Makes the folder; true when it was made now (it was not there). */
function makeOwn(folder: string, owner: Owner): boolean {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  if (owner !== null) lchownSync(folder, owner.uid, owner.gid);
  return true;
}

/** Copies the configured home's `file` to its place in a home made now: created new (O_EXCL), never through a link. */
function seed(file: string, holder: Placed, owner: Owner): void {
  if (!isWithin(holder.path, file)) return;
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return;
  }
  const inside = relative(holder.path, file);
  const folder = relative(holder.path, join(holder.path, inside, '..'));
  withFolder(holder.by, (fd) => {
    if (folder !== '') makePlace(fd, folder, false, owner);
    const target = `/proc/self/fd/${fd}/${inside}`;
    const out = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(out, bytes);
    } finally {
      closeSync(out);
    }
    if (owner !== null) lchownSync(target, owner.uid, owner.gid);
  });
}

function withFolder(folder: string, act: (fd: number) => void): void {
  const fd = openSync(folder, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    act(fd);
  } finally {
    closeSync(fd);
  }
}
