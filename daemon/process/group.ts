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

/** Whether any process of the group is still alive. */
export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}
