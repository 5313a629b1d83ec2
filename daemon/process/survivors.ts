import type { Clock } from '../clock.js';
import type { ProcessRecord } from '../store/store.js';
import { isSameProcess } from './proc.js';
import { stopTree } from './spawn.js';

/**
 * Stops engine processes that outlived a crashed daemon: only those that are still the recorded
 * process (same pid and start time), with their whole tree. Resolves when they are gone (or the
 * grace period and a second more have passed); returns the records that were alive.
 */
export async function stopSurvivors(records: readonly ProcessRecord[], clock: Clock, graceMs: number): Promise<ProcessRecord[]> {
  const alive = records.filter((r) => isSameProcess(r.pid, r.start_time));
  await Promise.all(alive.map((record) => stopTree(record.pid, clock, graceMs)));
  return alive;
}
