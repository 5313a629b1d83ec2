import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isWithin } from '../../rpc/within-folder.js';
import type { EngineHome } from './engine-homes.js';
import type { Cover } from './plan.js';

/** In a job's run folder: its own home, shown at the engine's HOME. */
const HOME = 'home';
/** In a job's run folder: its own engine home, when the engine's home folder is not below HOME. */
const ENGINE_HOME = 'engine-home';

/**
 * The homes of a job's own, in the run folder `runRoot`, shown in place of the engine's HOME and
 * home folder, so that what the engine writes there (sessions, chats, caches, shell history)
 * stays the job's own, and a later turn of the job finds it again. Made with the job's first
 * engine process: the engine's state files (`EngineHome.copied`) are copied in then, once.
 */
export function jobHomes(engine: EngineHome, runRoot: string): Cover[] {
  const homes: Array<{ path: string; by: string }> = [];
  // A HOME of `/`, or one that is not there, cannot be replaced: the engine home alone is.
  if (engine.home !== '/' && existsSync(engine.home)) homes.push({ path: engine.home, by: join(runRoot, HOME) });
  if (!homes.some((home) => isWithin(home.path, engine.folder)) && existsSync(engine.folder)) homes.push({ path: engine.folder, by: join(runRoot, ENGINE_HOME) });
  /** Where a path inside the sandbox is kept, in the run folder. */
  const keptAt = (inside: string): string | null => {
    const home = homes.findLast((one) => isWithin(one.path, inside));
    return home === undefined ? null : join(home.by, relative(home.path, inside));
  };
  const folder = keptAt(engine.folder);
  for (const home of homes) mkdirSync(home.by, { recursive: true, mode: 0o700 });
  if (folder !== null) mkdirSync(folder, { recursive: true, mode: 0o700 });
  for (const file of engine.copied) {
    const target = keptAt(file);
    if (target !== null && !existsSync(target) && existsSync(file)) copyFileSync(file, target);
  }
  return homes;
}
