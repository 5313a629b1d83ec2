import type { Clock } from '../base/clock.js';
import type { ProcessRecord } from '../store/store.js';
import { descendants, isSameProcess, listProcesses, markOf } from './proc.js';
import { belongingOf, stopAll } from './stop.js';

/** What a restart found left from before it, and stopped. */
export interface Survivors {
  /** Recorded engine processes that were still alive. */
  records: ProcessRecord[];
  /** Other processes marked with a job of this daemon (tools that outlived their engine, or an engine whose record never reached disk). */
  strays: { pid: number; job_id: string }[];
  /** Engine cgroups of this daemon's jobs that were still there (cgroup containment). */
  cgroups: { path: string; job_id: string }[];
}

/**
 * Stops what outlived a crashed daemon: the recorded engine processes that are still the same
 * process (same pid and start time), with their groups and trees, and every process marked with
 * one of `ownsJob`'s jobs. Resolves when they are gone (or the grace period and a second more
 * have passed).
 */
export async function stopSurvivors(records: readonly ProcessRecord[], ownsJob: (jobId: string) => boolean, clock: Clock, graceMs: number): Promise<Survivors> {
  const all = listProcesses();
  const alive = records.filter((r) => isSameProcess(r.pid, r.start_time));
  const leaders = all.filter((p) => alive.some((r) => r.pid === p.pid));
  const trees = leaders.flatMap((leader) => [leader, ...descendants(leader.pid, all)]);
  const belonging = { groups: alive.map((r) => r.pgid), owns: ownsJob, bornAfter: 0 };
  const owned = belongingOf(all, belonging);
  const strays = owned
    .filter((p) => !trees.some((t) => t.pid === p.pid))
    .flatMap((p) => {
      const mark = markOf(p.pid);
      return mark === null ? [] : [{ pid: p.pid, job_id: mark }];
    });
  await stopAll([...trees, ...owned], belonging, clock, graceMs);
  return { records: alive, strays, cgroups: [] };
}
