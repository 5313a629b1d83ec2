import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ENGINE_CGROUP_PREFIX, engineCgroupName, jobOfCgroup } from './cgroup.js';
import { safeReaddir } from './proc.js';

// The limits of an engine's processes and memory, by cgroup (docs/sandbox.md, "Limits"): in the
// engine's own cgroup v2 where the daemon's cgroup hands the controllers down, else in a group of
// the job's own in a cgroup v1 hierarchy where one is mounted and the daemon may write there.

/** What one engine process (and all it starts) may use; null: no limit. */
export interface EngineLimits {
  processes: number | null;
  /** Bytes. */
  memory: number | null;
}

export type LimitName = keyof EngineLimits;

/** A limit an engine ran into: which, and its value. */
export interface LimitHit {
  limit: LimitName;
  value: number;
}

/** Where a limit is enforced, or why it is not. */
export type LimitPlace = { by: 'cgroup v2' } | { by: 'cgroup v1'; parent: string } | { by: null; problem: string };

export type LimitSupport = Record<LimitName, LimitPlace>;

const CONTROLLERS: Record<LimitName, string> = { processes: 'pids', memory: 'memory' };

/** The files of each limit, by cgroup version: where it is set, and where its hits are counted. */
const FILES = {
  processes: { v2: { set: 'pids.max', events: 'pids.events', hit: /^max (\d+)$/m }, v1: { set: 'pids.max', events: 'pids.events', hit: /^max (\d+)$/m } },
  memory: { v2: { set: 'memory.max', events: 'memory.events', hit: /^oom_kill (\d+)$/m }, v1: { set: 'memory.limit_in_bytes', events: 'memory.oom_control', hit: /^oom_kill (\d+)$/m } },
} as const;

/** Where the kernel's cgroup files are read from (tests give a folder of their own). */
export interface CgroupFiles {
  mountinfo: string;
  cgroup: string;
}

/**
 * Where each limit can be enforced. `v2dir` is the daemon's cgroup v2 (engine containment's),
 * null without one. A controller its parent hands down (cgroup.controllers) but that is not yet
 * handed to its children is enabled there, after the daemon moves itself into a leaf of its own
 * (`skilld-daemon`): a cgroup with processes cannot hand controllers down. Else a cgroup v1
 * hierarchy of that controller, under the daemon's own group there.
 */
export function probeLimits(v2dir: string | null, files: CgroupFiles = { mountinfo: '/proc/self/mountinfo', cgroup: '/proc/self/cgroup' }): LimitSupport {
  const v2 = v2dir === null ? null : enableV2(v2dir);
  const place = (name: LimitName): LimitPlace => {
    const controller = CONTROLLERS[name];
    if (v2 !== null && v2.enabled.includes(controller)) return { by: 'cgroup v2' };
    const v1 = v1Parent(controller, files);
    if ('parent' in v1) {
      const problem = tryV1(v1.parent, name);
      if (problem === null) return { by: 'cgroup v1', parent: v1.parent };
      return { by: null, problem };
    }
    return { by: null, problem: v2 === null ? v1.problem : `${v2.problem ?? `the daemon's cgroup ${v2dir ?? ''} does not hand ${controller} down`}; ${v1.problem}` };
  };
  return { processes: place('processes'), memory: place('memory') };
}

/** The controllers the engine cgroups under `dir` get, enabling them where they can be; and why not where not. */
function enableV2(dir: string): { enabled: string[]; problem: string | null } {
  const handed = words(join(dir, 'cgroup.subtree_control'));
  const offered = words(join(dir, 'cgroup.controllers'));
  const wanted = Object.values(CONTROLLERS).filter((c) => offered.includes(c) && !handed.includes(c));
  if (wanted.length === 0) return { enabled: handed, problem: offered.length === 0 ? null : `the daemon's cgroup ${dir} is offered neither pids nor memory` };
  try {
    const leaf = join(dir, `${ENGINE_CGROUP_PREFIX}daemon`);
    if (!existsSync(leaf)) mkdirSync(leaf);
    writeFileSync(join(leaf, 'cgroup.procs'), String(process.pid));
    for (const controller of wanted) writeFileSync(join(dir, 'cgroup.subtree_control'), `+${controller}`);
  } catch (error) {
    return { enabled: words(join(dir, 'cgroup.subtree_control')), problem: `cannot hand ${wanted.join(' and ')} down from ${dir}: ${(error as Error).message}` };
  }
  return { enabled: words(join(dir, 'cgroup.subtree_control')), problem: null };
}

/** The daemon's own group in the cgroup v1 hierarchy of `controller`, or why there is none. */
function v1Parent(controller: string, files: CgroupFiles): { parent: string } | { problem: string } {
  const own = read(files.cgroup).split('\n').map((line) => line.split(':')).find((parts) => parts.length >= 3 && (parts[1] ?? '').split(',').includes(controller));
  if (own === undefined) return { problem: `no cgroup v1 hierarchy of ${controller}` };
  const path = own.slice(2).join(':');
  for (const line of read(files.mountinfo).split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const [fstype, , options = ''] = line.slice(dash + 3).split(' ');
    if (fstype !== 'cgroup' || !options.split(',').includes(controller)) continue;
    const [, , , root = '/', mountPoint = ''] = line.slice(0, dash).split(' ');
    if (path !== root && !path.startsWith(root === '/' ? '/' : `${root}/`)) continue;
    return { parent: resolve(mountPoint, `.${path.slice(root === '/' ? 0 : root.length)}`) };
  }
  return { problem: `the cgroup v1 hierarchy of ${controller} is not mounted` };
}

/** Whether a group of the daemon's own can be made under `parent` and limited; null when it can. */
function tryV1(parent: string, name: LimitName): string | null {
  const probe = join(parent, `${ENGINE_CGROUP_PREFIX}probe-${process.pid}`);
  try {
    mkdirSync(probe);
  } catch (error) {
    return `cannot make a cgroup v1 group in ${parent}: ${(error as Error).message}`;
  }
  try {
    writeFileSync(join(probe, FILES[name].v1.set), name === 'processes' ? '64' : String(64 * 1024 * 1024));
    return null;
  } catch (error) {
    return `cannot set ${FILES[name].v1.set} in ${parent}: ${(error as Error).message}`;
  } finally {
    removeEmpty(probe);
  }
}

/** Sets the limits of `names` in the cgroup v2 `dir` (an engine's); memory without swap where the kernel has it. */
export function setV2Limits(dir: string, limits: EngineLimits, names: readonly LimitName[]): void {
  for (const name of names) {
    const value = limits[name];
    if (value === null) continue;
    writeFileSync(join(dir, FILES[name].v2.set), String(value));
    if (name === 'memory' && existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
  }
}

/** The first limit of `names` the cgroup `dir` counts hits of; null for none. */
export function limitHit(dir: string, version: 1 | 2, limits: EngineLimits, names: readonly LimitName[]): LimitHit | null {
  for (const name of names) {
    const files = version === 2 ? FILES[name].v2 : FILES[name].v1;
    const count = Number(files.hit.exec(read(join(dir, files.events)))?.[1] ?? 0);
    const value = limits[name];
    if (count > 0 && value !== null) return { limit: name, value };
  }
  return null;
}

/**
 * The cgroup v1 groups of one engine process: made under each parent, limited, joined by the
 * engine's first process (the containment's shell, `Launch.join`), read for hits, and removed
 * once it has ended.
 */
export class V1Groups {
  readonly dirs: Array<{ name: LimitName; dir: string }>;
  readonly #limits: EngineLimits;

  constructor(support: LimitSupport, mark: string, limits: EngineLimits) {
    this.#limits = limits;
    this.dirs = [];
    try {
      for (const name of ['processes', 'memory'] as const) {
        const place = support[name];
        if (place.by !== 'cgroup v1' || limits[name] === null) continue;
        const dir = makeGroup(place.parent, mark);
        this.dirs.push({ name, dir });
        writeFileSync(join(dir, FILES[name].v1.set), String(limits[name]));
        // memsw is memory and swap together: the same value forbids swap, where the kernel counts it.
        const memsw = join(dir, 'memory.memsw.limit_in_bytes');
        if (name === 'memory' && existsSync(memsw)) writeFileSync(memsw, String(limits[name]));
      }
    } catch (error) {
      this.remove();
      throw error;
    }
  }

  /** The groups' folders, for the shell that starts the engine in them (cgroup.ts, `joinCgroupArgv`). */
  get paths(): string[] {
    return this.dirs.map((one) => one.dir);
  }

  hit(): LimitHit | null {
    for (const { name, dir } of this.dirs) {
      const found = limitHit(dir, 1, this.#limits, [name]);
      if (found !== null) return found;
    }
    return null;
  }

  /** Removes the groups; one that still holds a process stays, for the next start's sweep. */
  remove(): void {
    for (const { dir } of this.dirs) removeEmpty(dir);
  }
}

/**
 * At start: removes the empty cgroup v1 groups earlier daemons left (of engines taken up, or
 * stopped with a daemon that crashed) of the jobs `ownsJob` accepts: other daemons may share
 * the hierarchy. A group that still holds a process stays.
 */
export async function sweepV1(support: LimitSupport, ownsJob: (jobId: string) => Promise<boolean>): Promise<void> {
  for (const place of Object.values(support)) {
    if (place.by !== 'cgroup v1') continue;
    for (const entry of safeReaddir(place.parent)) {
      const jobId = jobOfCgroup(entry);
      if (jobId !== null && (await ownsJob(jobId))) removeEmpty(join(place.parent, entry));
    }
  }
}

/**
 * The cgroup v1 groups of one job there are now: those an earlier daemon made for an engine this
 * one takes up, which it knows by their names only. `remove` removes the empty ones (once that
 * engine has ended); groups made later, for the job's next turns, are not among them.
 */
export function jobGroupsV1(support: LimitSupport, jobId: string): { remove(): void } {
  const dirs: string[] = [];
  for (const place of Object.values(support)) {
    if (place.by !== 'cgroup v1') continue;
    for (const entry of safeReaddir(place.parent)) if (jobOfCgroup(entry) === jobId) dirs.push(join(place.parent, entry));
  }
  return { remove: () => dirs.forEach(removeEmpty) };
}

function makeGroup(parent: string, mark: string): string {
  for (let n = 1; ; n += 1) {
    const dir = join(parent, engineCgroupName(mark, n));
    try {
      mkdirSync(dir);
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

function removeEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // still holds a process, or gone
  }
}

function words(path: string): string[] {
  return read(path).split(/\s+/).filter((word) => word !== '');
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
