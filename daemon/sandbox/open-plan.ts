import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isWithin } from '../../rpc/within-folder.js';
import { ownPlace } from './input-paths.js';
import { makePlace } from './mount-points.js';
import { OpenPathError, openResolved, type OpenedPath } from './open-path.js';
import type { Mount, SandboxPlan } from './plan.js';

/** A plan whose paths are open, ready for `bwrapArgv`: what the sandbox will show, and what was left out and why. */
export interface OpenedPlan {
  plan: SandboxPlan;
  fds: Map<Mount, number>;
  /** Paths a job's input named that are not shown: gone, changed into one of the daemon's places, or nested. */
  left: Array<{ path: string; why: string }>;
  /** Closes every descriptor (once the sandbox's outer process holds its own). */
  close(): void;
}

/**
 * The descriptors of an opened plan as the sandbox's outer process gets them, from `first` on:
 * the numbers its command line names, and the daemon's descriptors in that order (its stdio
 * after the first three and whatever else it is given).
 */
export function handOver(opened: OpenedPlan, first: number): { numbers: Map<Mount, number>; fds: number[] } {
  const numbers = new Map<Mount, number>();
  const fds: number[] = [];
  for (const [mount, fd] of opened.fds) {
    numbers.set(mount, first + fds.length);
    fds.push(fd);
  }
  return { numbers, fds };
}

/** What `act` returns; its failure (a file gone, a full disk) as a start error of the sandbox. */
function orStartError<T>(what: string, act: () => T): T {
  try {
    return act();
  } catch (error) {
    throw new OpenPathError(`${what} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** A mount the folder that holds it shows already. */
const REDUNDANT = 'shown by the folder that holds it';

/**
 * Opens what `plan` shows, once (open-path.ts): each host path, each copied file, and each text
 * the daemon makes (written to `scratch`, a folder of the daemon's); checks each path a job's
 * input named on what was opened; and makes the places of what is shown inside the job's home
 * (mount-points.ts). A path of the job's input that cannot be shown is left out; any other that
 * cannot be opened fails the start (OpenPathError).
 */
export function openPlan(plan: SandboxPlan, scratch: string): OpenedPlan {
  const fds = new Map<Mount, number>();
  const opened = new Map<Mount, OpenedPath>();
  const left: OpenedPlan['left'] = [];
  const close = (): void => {
    for (const fd of fds.values()) closeSync(fd);
    fds.clear();
  };
  const kept: Mount[] = [];
  try {
    for (const mount of plan.mounts) {
      const why = openOne(plan, mount, kept, scratch, fds, opened);
      if (why === null) kept.push(mount);
      else if (why !== REDUNDANT) left.push({ path: mount.path, why });
    }
  } catch (error) {
    close();
    throw error;
  }
  return { plan: { ...plan, mounts: kept }, fds, left, close };
}

/** Opens one mount's source into `fds`; null when it is shown, else why a path of the job's input is left out. */
function openOne(plan: SandboxPlan, mount: Mount, before: readonly Mount[], scratch: string, fds: Map<Mount, number>, opened: Map<Mount, OpenedPath>): string | null {
  const holder = before.findLast((one): one is Extract<Mount, { kind: 'bind' }> => one.kind === 'bind' && isWithin(one.path, mount.path) && one.path !== mount.path);
  const checked = mount.kind === 'bind' && mount.role === 'input';
  // Inside another shown folder, bubblewrap would make the place of a mount itself, following any
  // link there: only the system's folders (root's) and the job's home (made ready here) may hold one.
  if (holder !== undefined && holder.role !== 'system' && holder.role !== 'home') {
    // Shown already, as it is, by the folder that holds it.
    if (mount.kind === 'bind' && mount.source === mount.path && holder.source === holder.path && mount.access === holder.access) return REDUNDANT;
    const why = `it lies in ${holder.path}, which the sandbox shows too`;
    if (checked) return why;
    throw new OpenPathError(`${mount.path}: ${why}; show one or the other`);
  }
  const holderFd = holder?.role === 'home' ? opened.get(holder) : undefined;
  switch (mount.kind) {
    case 'bind': {
      let one: OpenedPath;
      try {
        one = openResolved(mount.source);
      } catch (error) {
        if (checked && error instanceof OpenPathError) return error.message;
        throw error;
      }
      if (checked && ownPlace(one.real, plan.own)) {
        closeSync(one.fd);
        return `${one.real} is or holds one of the daemon's own places`;
      }
      fds.set(mount, one.fd);
      opened.set(mount, one);
      if (holderFd !== undefined) makePlace(holderFd.fd, relative(holder?.path ?? '/', mount.path), one.kind === 'file', plan.runAs);
      return null;
    }
    case 'copy':
      fds.set(mount, orStartError(`${mount.source} cannot be read`, () => openSync(mount.source, 'r')));
      break;
    case 'text': {
      const file = join(scratch, `sandbox${mount.path.replaceAll('/', '-')}`);
      fds.set(mount, orStartError(`${mount.path} cannot be made`, () => {
        mkdirSync(scratch, { recursive: true, mode: 0o700 });
        writeFileSync(file, mount.text, { mode: 0o600 });
        return openSync(file, 'r');
      }));
      break;
    }
    case 'link':
    case 'tmpfs':
      break;
  }
  if (holderFd !== undefined && mount.kind !== 'link') makePlace(holderFd.fd, relative(holder?.path ?? '/', mount.path), mount.kind !== 'tmpfs', plan.runAs);
  return null;
}
