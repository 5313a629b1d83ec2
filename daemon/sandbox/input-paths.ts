import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { SkilldError } from '../../rpc/errors.js';
import { isWithin } from '../../rpc/within-folder.js';
import type { PathAccess } from '../skills/manifest.js';
import type { RunAs, SandboxPlan } from './plan.js';

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
 * Why the sandbox may not show the paths a new job's input names, or null when it may: each must
 * be an absolute path that exists, and neither lie in nor hold any of the daemon's own places
 * (`ownPlace`); and none may lie in another (a folder shown inside a shown folder would be made
 * there, in a folder that others may write).
 */
export function refuseInputPaths(given: readonly InputPath[], own: SandboxPlan['own'], user: Pick<RunAs, 'uid' | 'gid' | 'user'> | null = null): SkilldError | null {
  const reals: Array<{ one: InputPath; real: string }> = [];
  for (const one of given) {
    const refuse = (why: string): SkilldError => new SkilldError('INPUT_INVALID', `input ${one.name}: ${why}`, { details: { name: one.name, path: one.path } });
    if (!isAbsolute(one.path)) return refuse('must be an absolute path, for the job to be shown it');
    let real: string;
    try {
      real = realpathSync(one.path);
    } catch {
      return refuse(`${one.path} does not exist`);
    }
    if (ownPlace(real, own)) return refuse(`${one.path} ${OWN_PLACE}`);
    const denied = user === null ? null : deniedTo(real, one.access, user);
    if (denied !== null) return refuse(`${one.path} cannot be ${denied} by ${user?.user ?? ''}, the user engines run as (sandbox.run_as): make it theirs, their group's, or open to all`);
    const outer = reals.find((other) => isWithin(other.real, real) || isWithin(real, other.real));
    if (outer !== undefined) return refuse(`${one.path} lies in or holds ${outer.one.path} (input ${outer.one.name}): inputs may not nest, or be the same path`);
    reals.push({ one, real });
  }
  return null;
}

/**
 * What `user` may not do to the path that its sandbox shows with `access`, by its mode bits
 * (`read`, or `written` too; a folder must be entered): null when it may. The folders above it
 * do not matter: the sandbox is handed the path open.
 */
function deniedTo(real: string, access: PathAccess, user: Pick<RunAs, 'uid' | 'gid'>): 'read' | 'written' | null {
  const stat = statSync(real);
  const shift = stat.uid === user.uid ? 6 : stat.gid === user.gid ? 3 : 0;
  const bits = (stat.mode >> shift) & 0o7;
  const enter = stat.isDirectory() ? 0o1 : 0;
  if ((bits & (0o4 | enter)) !== (0o4 | enter)) return 'read';
  return access === 'read_write' && (bits & 0o2) === 0 ? 'written' : null;
}

/** Why an input path is refused when it is one of the daemon's places (the words of INPUT_INVALID). */
export const OWN_PLACE = "is or holds one of the daemon's own places (its state, socket, config, skills, engine homes, its user's home or what that home keeps in dot-files), which no job is shown";

/**
 * Whether the resolved path `real` is, lies in or holds one of the daemon's own places (its
 * state, socket, runtime folder, config, engine homes and, with `skills`, its skills folders), or
 * is the daemon user's home or lies in its dot-files (`~/.ssh`, `~/.pgpass`, `~/.config`: a
 * project below that home may be shown).
 */
export function ownPlace(real: string, own: SandboxPlan['own'], skills = true): boolean {
  const reals = [...own.places, ...(skills ? own.skills : [])].map(realOrSelf);
  const home = realOrSelf(own.home);
  return reals.some((place) => isWithin(place, real) || isWithin(real, place)) || isWithin(real, home) || isHiddenInHome(home, real);
}

/** Whether `real` lies in a dot-file or dot-folder of the home: the user's own settings and keys. */
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
