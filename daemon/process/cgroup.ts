import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runShort } from './run-short.js';

// The only code that touches the cgroup v2 file system (see docs/engines.md, "Containment").

/** Engine cgroups are children of the daemon's cgroup named `skilld-<job id>-<n>`, so that a restart can tell whose they are. */
export const ENGINE_CGROUP_PREFIX = 'skilld-';
/** How long the probe's process may take to join its cgroup. */
const PROBE_TIMEOUT_MS = 5000;

/** A cgroup2 mount: where it is mounted, and the cgroup of the hierarchy that is its root. */
export interface Cgroup2Mount {
  mountPoint: string;
  root: string;
}

/** Whether the daemon can hold engines in cgroups of their own: where, or why not. */
export type CgroupProbe = { usable: true; dir: string } | { usable: false; problem: string };

/** The cgroup2 mounts in the text of /proc/self/mountinfo, in order. */
export function parseCgroup2Mounts(mountinfo: string): Cgroup2Mount[] {
  const mounts: Cgroup2Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    // id parent major:minor root mount-point options [optional fields] - fstype source super-options
    const dash = line.indexOf(' - ');
    if (dash < 0 || line.slice(dash + 3).split(' ')[0] !== 'cgroup2') continue;
    const [, , , root, mountPoint] = line.slice(0, dash).split(' ');
    if (root !== undefined && mountPoint !== undefined) mounts.push({ root: unescapeField(root), mountPoint: unescapeField(mountPoint) });
  }
  return mounts;
}

/** The cgroup v2 path in the text of /proc/self/cgroup (its `0::<path>` line); null without one. */
export function parseOwnCgroup(procCgroup: string): string | null {
  const line = procCgroup.split('\n').find((l) => l.startsWith('0::'));
  return line === undefined || line.length === 3 ? null : line.slice(3);
}

/** Where the cgroup `path` is found in the file system: under the first mount whose root holds it. */
export function cgroupDirOf(mounts: readonly Cgroup2Mount[], path: string): string | null {
  for (const mount of mounts) {
    const inside = mount.root === '/' ? path.startsWith('/') : path === mount.root || path.startsWith(`${mount.root}/`);
    if (inside) return resolve(mount.mountPoint, `.${path.slice(mount.root === '/' ? 0 : mount.root.length)}`);
  }
  return null;
}

/** The name of the n-th engine cgroup of a job. */
export function engineCgroupName(jobId: string, n: number): string {
  return `${ENGINE_CGROUP_PREFIX}${jobId}-${n}`;
}

/** The job an engine cgroup's name carries; null for any other name. */
export function jobOfCgroup(name: string): string | null {
  if (!name.startsWith(ENGINE_CGROUP_PREFIX)) return null;
  return /^(.+)-\d+$/.exec(name.slice(ENGINE_CGROUP_PREFIX.length))?.[1] ?? null;
}

/**
 * Starts `argv` inside the cgroup `dir`, and in any other groups `also` names (cgroup v1 groups of
 * its limits): a shell writes its own pid into each, then execs the engine, which keeps that pid.
 * Everything the engine starts is born in them, even in its first microseconds; nothing but the
 * shell itself ever runs outside.
 */
export function joinCgroupArgv(dir: string, argv: readonly string[], also: readonly string[] = []): string[] {
  if (also.length === 0) return ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...argv];
  return joinGroupsArgv([dir, ...also], argv);
}

/** Starts `argv` in every group of `dirs` (their count, then the groups, come first in the shell's arguments). */
export function joinGroupsArgv(dirs: readonly string[], argv: readonly string[]): string[] {
  return ['/bin/sh', '-c', JOIN_GROUPS, JOIN_NAME, String(dirs.length), ...dirs, ...argv];
}

/** The `$0` of the shell that joins the groups, by which the gate (keeper.ts) knows it can go in front of its script. */
export const JOIN_NAME = 'skilld-join';

const JOIN_GROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

/**
 * Finds this process's cgroup and checks, on a child created for the purpose, everything engine
 * containment does: creating a child cgroup, `cgroup.kill` (Linux 5.14+), a process joining it
 * through `joinCgroupArgv`, removing it.
 */
export async function probeCgroups(files = { mountinfo: '/proc/self/mountinfo', cgroup: '/proc/self/cgroup' }): Promise<CgroupProbe> {
  const own = parseOwnCgroup(readText(files.cgroup));
  if (own === null) return { usable: false, problem: `no cgroup v2 entry in ${files.cgroup}` };
  const dir = cgroupDirOf(parseCgroup2Mounts(readText(files.mountinfo)), own);
  if (dir === null) return { usable: false, problem: `no cgroup2 mount holds cgroup ${own}` };
  const probe = join(dir, `${ENGINE_CGROUP_PREFIX}probe-${process.pid}`);
  try {
    mkdirSync(probe);
  } catch (error) {
    return { usable: false, problem: `cannot create a cgroup in ${dir}: ${(error as Error).message}` };
  }
  try {
    if (!existsSync(join(probe, 'cgroup.kill'))) return { usable: false, problem: `no cgroup.kill under ${dir} (Linux 5.14 or later has it)` };
    const joined = await runShort(joinCgroupArgv(probe, ['/bin/sh', '-c', ':']), {}, PROBE_TIMEOUT_MS);
    return joined.ok ? { usable: true, dir } : { usable: false, problem: `a process cannot join a cgroup under ${dir}: ${joined.error ?? joined.stderr.trim()}` };
  } finally {
    removeCgroup(probe);
  }
}

/** Creates a cgroup; throws as mkdir does (EEXIST included). */
export function createCgroup(dir: string): void {
  mkdirSync(dir);
}

/** The processes directly in the cgroup; none once it is gone. */
export function cgroupPids(dir: string): number[] {
  return readText(join(dir, 'cgroup.procs'))
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

/**
 * Whether any process is left in the cgroup or below it (zombies do not count). For a moment after
 * it turns false, the kernel may still refuse to remove the cgroup, while the last process
 * finishes exiting.
 */
export function cgroupPopulated(dir: string): boolean {
  return /^populated 1$/m.test(readText(join(dir, 'cgroup.events')));
}

/**
 * SIGKILL to every process in the cgroup and below it, by the kernel, forks in flight included.
 * Never throws: a cgroup already gone has nothing to kill, and a stop waiting on one that could
 * not be killed gives up in time.
 */
export function killCgroup(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // see above
  }
}

/**
 * Removes the cgroup and any cgroup an engine made below it; false while that cannot be done yet
 * (EBUSY: a process is still in it, or one has just exited, see `populated 0`).
 */
export function removeCgroup(dir: string): boolean {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeCgroup(join(dir, entry.name));
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** The engine cgroups under `dir` (the daemon's own cgroup), with the job each name carries. */
export function engineCgroups(dir: string): { path: string; jobId: string }[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const jobId = entry.isDirectory() ? jobOfCgroup(entry.name) : null;
    return jobId === null ? [] : [{ path: join(dir, entry.name), jobId }];
  });
}

/** Mount fields escape space, tab, newline and backslash as octal (`\040`). */
function unescapeField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
