import type { Clock } from '../base/clock.js';
import { signalGroup } from './group.js';
import { descendants, isSameProcess, listProcesses, markOf, signalEach, type ProcStat } from './proc.js';

/** While a stop is under way, how often the processes being stopped are checked. */
export const STOP_CHECK_MS = 20;
/** While processes being stopped are alive, every this many checks /proc is read for newcomers. */
const LOOK_EVERY_TICKS = 5;

/** What belongs to a stop besides the processes named at its start. */
export interface Belonging {
  /** Process groups signalled as a whole. */
  groups: readonly number[];
  /** Whether a process marked with this job belongs (see `JOB_MARK`). */
  owns(mark: string): boolean;
  /** Only processes started at or after this many clock ticks since boot can belong by their mark. */
  bornAfter: number;
  /**
   * A process that gets no SIGTERM, only the final SIGKILL: a sandbox's outer process, which would
   * end the whole sandbox at once; it ends by itself once what it runs has ended.
   */
  spared?: number;
}

/** The members of `groups` and the marked processes that belong, among `all`; never this process. */
export function belongingOf(all: readonly ProcStat[], belonging: Belonging): ProcStat[] {
  return all.filter((p) => {
    if (p.pid === process.pid) return false;
    if (belonging.groups.includes(p.pgid)) return true;
    if (Number(p.startTime) < belonging.bornAfter) return false;
    const mark = markOf(p.pid);
    return mark !== null && belonging.owns(mark);
  });
}

/**
 * The stop sequence of an engine: SIGTERM to its group, its descendants (snapshotted first, so
 * tools that left the group are included) and every process marked with its job, then SIGKILL to
 * whatever is still the same process after the grace period. With `spareLeader` the leader (a
 * sandbox's outer process) gets only the SIGKILL. Resolves once none of them is alive
 * (zombies waiting for a reaper count as gone), at the latest a second after the SIGKILL.
 */
export function stopTree(pid: number, clock: Clock, graceMs: number, mark: string | null, spareLeader = false): Promise<void> {
  const all = listProcesses();
  const leader = all.find((p) => p.pid === pid) ?? null;
  const belonging: Belonging = { groups: [pid], owns: (m) => m === mark, bornAfter: leader === null ? 0 : Number(leader.startTime), ...(spareLeader ? { spared: pid } : {}) };
  const named = leader === null ? [] : [leader, ...descendants(pid, all)];
  return stopAll([...named, ...belongingOf(all, belonging)], belonging, clock, graceMs);
}

/**
 * Stops `initial` and what belongs with it. When everything known is gone, /proc is read once
 * more for what belongs (a tool born while the stop began, an orphan of a process that just
 * exited); anything new gets the same sequence, so the stop ends with nothing of it left. While
 * some are alive the look is taken every `LOOK_EVERY_TICKS` checks too: a tool an engine starts
 * inside its sandbox as it is stopped keeps the sandbox's outer process waiting for it, and gets
 * its SIGTERM then, not the SIGKILL at the end of the grace period.
 */
export async function stopAll(initial: readonly ProcStat[], belonging: Belonging, clock: Clock, graceMs: number): Promise<void> {
  const members = new Map<string, ProcStat>();
  const add = (list: readonly ProcStat[]): ProcStat[] => {
    const fresh = list.filter((p) => !members.has(`${p.pid}:${p.startTime}`));
    for (const p of fresh) members.set(`${p.pid}:${p.startTime}`, p);
    return fresh;
  };
  const alive = (p: ProcStat): boolean => isSameProcess(p.pid, p.startTime);
  const anyAlive = (): boolean => [...members.values()].some(alive);
  add(initial);
  let killed = false;
  const terminate = (list: readonly ProcStat[]): void => signalEach(list.filter((p) => p.pid !== belonging.spared), 'SIGTERM');
  if (belonging.spared === undefined) for (const group of belonging.groups) signalGroup(group, 'SIGTERM');
  terminate([...members.values()]);
  const kill = clock.setTimer(graceMs, () => {
    killed = true;
    for (const group of belonging.groups) signalGroup(group, 'SIGKILL');
    signalEach([...members.values()], 'SIGKILL');
  });
  const giveUpAt = clock.now().getTime() + graceMs + 1000;
  for (let tick = 1; clock.now().getTime() < giveUpAt; tick += 1) {
    const waiting = anyAlive();
    if (!waiting || tick % LOOK_EVERY_TICKS === 0) {
      const fresh = add(belongingOf(listProcesses(), belonging));
      if (killed) signalEach(fresh, 'SIGKILL');
      else terminate(fresh);
      if (!waiting && fresh.length === 0) break;
    }
    await new Promise<void>((resolve) => clock.setTimer(STOP_CHECK_MS, resolve));
  }
  if (!anyAlive()) kill.cancel();
}

