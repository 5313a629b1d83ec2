import { join } from 'node:path';
import type { Clock } from '../base/clock.js';
import type { ProcessRecord } from '../store/store.js';
import { limitHit, setV2Limits, type LimitHit } from './cgroup-limits.js';
import { cgroupPids, cgroupPopulated, createCgroup, engineCgroupName, engineCgroups, joinCgroupArgv, killCgroup, removeCgroup } from './cgroup.js';
import { StartError, processGroupContainment, type Containment, type ContainmentView, type Hold, type Launch } from './containment.js';
import { execError } from '../sandbox/executable.js';
import { groupAlive, signalGroup } from './group.js';
import type { Place } from './keeper.js';
import { STOP_CHECK_MS } from './stop.js';
import { stopSurvivors, type Survivors } from './survivors.js';

/** How long an unpopulated cgroup may refuse its removal before it is left in place, and how often it is tried. */
const REMOVE_RETRY_MS = 1000;
const REMOVE_RETRY_EVERY_MS = 2;

/**
 * Each engine process in a cgroup of its own, a child of the daemon's cgroup `dir`: everything
 * the engine starts is born there and cannot leave it without write access to cgroupfs, so a
 * stop that ends in `cgroup.kill` leaves nothing behind.
 */
export class CgroupContainment implements Containment {
  readonly view: ContainmentView;
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #graceMs: number;
  #count = 0;

  constructor(dir: string, clock: Clock, graceMs: number) {
    this.view = { kind: 'cgroup', path: dir };
    this.#dir = dir;
    this.#clock = clock;
    this.#graceMs = graceMs;
  }

  hold(launch: Launch): Hold {
    // The shell that joins the cgroup would hide a missing engine behind its own exit code 127.
    const cannotExec = execError(launch.argv[0] ?? '', launch.env['PATH'], launch.cwd);
    if (cannotExec !== null) throw new StartError(cannotExec);
    for (;;) {
      this.#count += 1;
      const dir = join(this.#dir, engineCgroupName(launch.mark, this.#count));
      try {
        createCgroup(dir);
        const hold = new CgroupHold(dir, joinCgroupArgv(dir, launch.argv, launch.join), this.#clock, this.#graceMs, launch.spareLeader === true, launch.limits ?? null);
        try {
          if (launch.limits !== undefined) setV2Limits(dir, launch.limits.values, launch.limits.names);
        } catch (error) {
          removeCgroup(dir);
          throw new StartError(`cannot set the limits of the engine's cgroup ${dir}: ${(error as Error).message}`, { cause: error });
        }
        return hold;
      } catch (error) {
        // EEXIST: a cgroup of an earlier daemon that could not be removed yet; take the next number.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new StartError(`cannot create the engine's cgroup ${dir}: ${(error as Error).message}`, { cause: error });
      }
    }
  }

  /** A cgroup an earlier daemon made; a process held by process group then is held so again. */
  adopt(place: Place, mark: string, spareLeader: boolean): Hold {
    if (place.kind === 'cgroup') return new CgroupHold(place.path, [], this.#clock, this.#graceMs, spareLeader, null);
    return processGroupContainment(this.#clock, this.#graceMs).adopt(place, mark, spareLeader);
  }

  async stopSurvivors(records: readonly ProcessRecord[], ownsJob: (jobId: string) => boolean): Promise<Survivors> {
    // Other daemons may share this cgroup: only cgroups of this daemon's own jobs are touched.
    const left = engineCgroups(this.#dir).filter((cgroup) => ownsJob(cgroup.jobId));
    await Promise.all(left.map((cgroup) => stopCgroup(cgroup.path, null, this.#clock, this.#graceMs)));
    // Then whatever lived outside them: the processes of a daemon that ran with process groups.
    const outside = await stopSurvivors(records, ownsJob, this.#clock, this.#graceMs);
    return { ...outside, cgroups: left.map((cgroup) => ({ job_id: cgroup.jobId, path: cgroup.path })) };
  }
}

/** One engine process's cgroup: its stop sequence runs once, whether a stop or the exit asks first. */
class CgroupHold implements Hold {
  readonly argv: readonly string[];
  readonly place: Place;
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #spareLeader: boolean;
  readonly #limits: Launch['limits'] | null;
  #stopping: Promise<void> | null = null;

  constructor(dir: string, argv: readonly string[], clock: Clock, graceMs: number, spareLeader: boolean, limits: Launch['limits'] | null) {
    this.argv = argv;
    this.place = { kind: 'cgroup', path: dir };
    this.#dir = dir;
    this.#clock = clock;
    this.#graceMs = graceMs;
    this.#spareLeader = spareLeader;
    this.#limits = limits;
  }

  limitHit(): LimitHit | null {
    return this.#limits == null ? null : limitHit(this.#dir, 2, this.#limits.values, this.#limits.names);
  }

  stop(pid: number): Promise<void> {
    return this.#stop(pid);
  }

  release(): Promise<void> {
    if (this.#stopping === null && !cgroupPopulated(this.#dir)) return removeWhenFree(this.#dir, this.#clock);
    return this.#stop(null);
  }

  #stop(pgid: number | null): Promise<void> {
    this.#stopping ??= stopCgroup(this.#dir, pgid, this.#clock, this.#graceMs, this.#spareLeader);
    return this.#stopping;
  }
}

/**
 * The stop sequence of an engine cgroup: SIGTERM to the process group `pgid` (when given) and to
 * every process of the cgroup, and to any that appears during the grace period; then
 * `cgroup.kill`. Resolves once the cgroup is unpopulated (at the latest a second after the kill,
 * for a process stuck in the kernel) and removed (unless something is still in it). With
 * `spareLeader`, the process `pgid` (a sandbox's outer process) gets only the kill.
 */
export async function stopCgroup(dir: string, pgid: number | null, clock: Clock, graceMs: number, spareLeader = false): Promise<void> {
  const signalled = new Set<number>(spareLeader && pgid !== null ? [pgid] : []);
  const terminate = (): void => {
    for (const pid of cgroupPids(dir).filter((p) => !signalled.has(p))) {
      signalled.add(pid);
      signal(pid, 'SIGTERM');
    }
  };
  if (pgid !== null && !spareLeader) signalGroup(pgid, 'SIGTERM');
  terminate();
  let killed = false;
  const kill = clock.setTimer(graceMs, () => {
    killed = true;
    killCgroup(dir);
    // A leader stopped before it joined the cgroup (a stop right after the start) is not in it yet.
    if (pgid !== null) signalGroup(pgid, 'SIGKILL');
  });
  const giveUpAt = clock.now().getTime() + graceMs + 1000;
  // The leader's group too: until it has joined, the cgroup is empty though the engine is starting.
  while ((cgroupPopulated(dir) || (pgid !== null && groupAlive(pgid))) && clock.now().getTime() < giveUpAt) {
    await new Promise<void>((resolve) => clock.setTimer(STOP_CHECK_MS, resolve));
    if (!killed) terminate();
  }
  kill.cancel();
  await removeWhenFree(dir, clock);
}

/**
 * Removes the cgroup once the kernel lets it: rmdir answers EBUSY for a moment after the last
 * process left, and a shell stopped just before it joined may join on its way out. A cgroup that
 * stays busy is left for the next start's recovery.
 */
async function removeWhenFree(dir: string, clock: Clock): Promise<void> {
  const until = clock.now().getTime() + REMOVE_RETRY_MS;
  while (!removeCgroup(dir) && clock.now().getTime() < until) await new Promise<void>((resolve) => clock.setTimer(REMOVE_RETRY_EVERY_MS, resolve));
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone in the meantime
  }
}
