import type { Clock } from '../base/clock.js';
import type { ProcessRecord } from '../store/store.js';
import { groupAlive } from './group.js';
import type { EngineLimits, LimitHit, LimitName } from './cgroup-limits.js';
import { joinGroupsArgv } from './cgroup.js';
import type { Place } from './keeper.js';
import { stopTree } from './stop.js';
import { stopSurvivors, type Survivors } from './survivors.js';

/** What `daemon/status` reports: how engine processes are held together and stopped. */
export type ContainmentView = { kind: 'cgroup'; path: string } | { kind: 'process_group' };

/** An engine process could not be started, and nothing was; the message is the OS error code when there is one (`ENOENT`). */
export class StartError extends Error {
  override readonly name = 'StartError';
}

/** What containment needs to know of an engine process about to start. */
export interface Launch {
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Its job id. */
  mark: string;
  /**
   * The process started is a sandbox's outer process: a stop gives it no SIGTERM (it would end the
   * sandbox at once, with no grace for the engine inside), only the final SIGKILL.
   */
  spareLeader?: boolean;
  /** The limits a cgroup v2 of its own sets (cgroup-limits.ts); absent: none there. */
  limits?: { values: EngineLimits; names: readonly LimitName[] };
  /** Other groups (cgroup v1, of its limits) its first process joins before the engine starts. */
  join?: readonly string[];
}

/** What holds one engine process and everything it starts. */
export interface Hold {
  /** The argv to start: the engine's own, or one that starts it held. */
  readonly argv: readonly string[];
  /** Where it holds the process, recorded so that a later daemon can hold it again (`adopt`). */
  readonly place: Place;
  /** The stop sequence while the engine runs; resolves once nothing it holds is left. */
  stop(pid: number): Promise<void>;
  /** After the engine exited, or never started: stops what it left behind and lets the hold go. */
  release(pid: number | null): Promise<void>;
  /** A limit the process ran into, read before `release` (cgroup-limits.ts); null for none. */
  limitHit?(): LimitHit | null;
}

/** How engine processes are kept together and stopped: by cgroup where the kernel allows, else by process group and job mark. */
export interface Containment {
  readonly view: ContainmentView;
  /** A hold for an engine process about to start. Throws StartError when it cannot start. */
  hold(launch: Launch): Hold;
  /** The hold of a process an earlier daemon started at `place` (restarts, docs/restarts.md). */
  adopt(place: Place, mark: string, spareLeader: boolean): Hold;
  /** Stops what a crashed daemon left of the jobs that `ownsJob` accepts, before the socket accepts. */
  stopSurvivors(records: readonly ProcessRecord[], ownsJob: (jobId: string) => boolean): Promise<Survivors>;
}

/**
 * Process groups and job marks (see docs/engines.md): a stop signals the engine's group, its
 * descendants and the processes marked with its job. When an engine exits by itself, only the
 * members of its group still alive are stopped, and nobody waits for them: a look for marked
 * tools at every turn's end costs a read of /proc.
 */
export function processGroupContainment(clock: Clock, graceMs: number): Containment {
  const hold = (argv: readonly string[], mark: string, spareLeader: boolean): Hold => ({
    argv,
    place: { kind: 'process_group' },
    stop: (pid) => stopTree(pid, clock, graceMs, mark, spareLeader),
    release: (pid) => {
      if (pid !== null && groupAlive(pid)) void stopTree(pid, clock, graceMs, mark, spareLeader);
      return Promise.resolve();
    },
  });
  return {
    view: { kind: 'process_group' },
    hold: ({ argv, mark, spareLeader = false, join = [] }) => hold(join.length === 0 ? argv : joinGroupsArgv(join, argv), mark, spareLeader),
    adopt: (_place, mark, spareLeader) => hold([], mark, spareLeader),
    stopSurvivors: (records, ownsJob) => stopSurvivors(records, ownsJob, clock, graceMs),
  };
}
