import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { SkilldError } from '../../rpc/errors.js';
import { isWithin } from '../../rpc/within-folder.js';
import type { PathAccess } from '../skills/manifest.js';


/** A path a job's input names, that its skill declares it works on. */
export interface InputPath {
  /** The input's name. */
  name: string;
  path: string;
  access: PathAccess;
}

/** The paths `input` names under the names the skill declares; values that are not strings name none. */
export function inputPaths(declared: Readonly<Record<string, PathAccess>>, input: Readonly<Record<string, unknown>>): InputPath[] {
  return Object.entries(declared).flatMap(([name, access]) => {
    const path = input[name];
    return typeof path === 'string' ? [{ name, path, access }] : [];
  });
}

/**
 * Why the sandbox may not show `given`, or null when it may: it must be an absolute path that
 * exists, and neither lie in nor hold any of the daemon's own places (`own`: its state, socket,
 * config, skills and engine homes; `home`: the daemon user's home, which may hold the path but
 * not be shown whole, nor its dot-files).
 */
export function refusePath(given: InputPath, own: readonly string[], home: string): SkilldError | null {
  const refuse = (why: string): SkilldError => new SkilldError('INPUT_INVALID', `input ${given.name}: ${why}`, { details: { name: given.name, path: given.path } });
  if (!isAbsolute(given.path)) return refuse('must be an absolute path, for the job to be shown it');
  let real: string;
  try {
    real = realpathSync(given.path);
  } catch {
    return refuse(`${given.path} does not exist`);
  }
  const reals = own.map(realOrSelf);
  const realHome = realOrSelf(home);
  if (reals.some((place) => isWithin(place, real) || isWithin(real, place)) || isWithin(real, realHome) || isHiddenInHome(realHome, real)) {
    return refuse(`${given.path} is or holds one of the daemon's own places (its state, socket, config, skills, engine homes, its user's home or what that home keeps in dot-files), which no job is shown`);
  }
  return null;
}

/** Whether `real` lies in a dot-file or dot-folder of the home (`~/.ssh`, `~/.pgpass`, `~/.config`): the user's own settings and keys. */
function isHiddenInHome(home: string, real: string): boolean {
  if (!isWithin(home, real) || real === home) return false;
  return relative(home, real).split(sep)[0]?.startsWith('.') === true;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
