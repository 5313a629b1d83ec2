import { listProcesses, readStat } from './proc.js';

/** Signals every process of a process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Whether any process of the group is still alive. A zombie does not count: an ended process
 * whose parent has not yet collected it, as a keeper taken up after a restart is, whose parent
 * is then PID 1 (which may take a second or more to collect it, in a container).
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const leader = readStat(pgid);
  if (leader !== null && leader.pgid === pgid && leader.state !== 'Z' && leader.state !== 'X') return true;
  return listProcesses().some((p) => p.pgid === pgid);
}
