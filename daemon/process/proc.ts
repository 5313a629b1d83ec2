import { readFileSync, readdirSync } from 'node:fs';

/** What /proc/<pid>/stat tells of a process. */
export interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  /** Clock ticks since boot at which the process started: with the pid, it names one process. */
  startTime: string;
}

/** Reads /proc/<pid>/stat; null when the process is gone (or this is not Linux). */
export function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, ppid, pgid] = fields;
  const startTime = fields[19];
  if (state === undefined || ppid === undefined || pgid === undefined || startTime === undefined) return null;
  return { pid, ppid: Number(ppid), pgid: Number(pgid), state, startTime };
}

/** A live (not zombie) process with this pid and start time. */
export function isSameProcess(pid: number, startTime: string): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.startTime === startTime && stat.state !== 'Z' && stat.state !== 'X';
}

/**
 * Every live descendant of `pid` and every member of process group `pgid`, found by walking
 * parent links in /proc. Taken before signalling, so that tools that left the group (their own
 * session) are stopped too.
 */
export function processTree(pid: number, pgid: number): ProcStat[] {
  const all: ProcStat[] = [];
  for (const name of safeReaddir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat !== null && stat.state !== 'Z') all.push(stat);
  }
  const children = new Map<number, ProcStat[]>();
  for (const stat of all) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const found = new Map<number, ProcStat>();
  const stack = [pid];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() as number) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      stack.push(child.pid);
    }
  }
  for (const stat of all) if (stat.pgid === pgid && stat.pid !== pid) found.set(stat.pid, stat);
  return [...found.values()];
}

/** Sends `signal` to each process that is still the one in the snapshot (never a recycled pid). */
export function signalEach(processes: readonly ProcStat[], signal: NodeJS.Signals): void {
  for (const proc of processes) {
    if (!isSameProcess(proc.pid, proc.startTime)) continue;
    try {
      process.kill(proc.pid, signal);
    } catch {
      // gone in the meantime
    }
  }
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
