import { readFileSync, readdirSync } from 'node:fs';

/**
 * The variable every engine process is started with, naming its job. Tools inherit it wherever
 * they go (another process group, another session, reparented to init), so a job's processes can
 * be found when the parent links are gone.
 */
export const JOB_MARK = 'SKILLD_JOB_ID';

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

/** Every live (not zombie) process, read from /proc. */
export function listProcesses(): ProcStat[] {
  const all: ProcStat[] = [];
  for (const name of safeReaddir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat !== null && stat.state !== 'Z' && stat.state !== 'X') all.push(stat);
  }
  return all;
}

/**
 * Every descendant of `pid` among `all`, found by walking parent links. Taken before signalling,
 * so that tools that left the group (their own session) are stopped too.
 */
export function descendants(pid: number, all: readonly ProcStat[]): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const stat of all) {
    const siblings = children.get(stat.ppid);
    if (siblings === undefined) children.set(stat.ppid, [stat]);
    else siblings.push(stat);
  }
  const found = new Map<number, ProcStat>();
  const stack = [pid];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() as number) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      stack.push(child.pid);
    }
  }
  return [...found.values()];
}

/** The job a process is marked with (its `JOB_MARK` variable); null when unmarked, unreadable or gone. */
export function markOf(pid: number): string | null {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
  const key = Buffer.from(`${JOB_MARK}=`);
  for (let at = environ.indexOf(key); at >= 0; at = environ.indexOf(key, at + 1)) {
    if (at > 0 && environ[at - 1] !== 0) continue; // the text inside another variable's value
    const end = environ.indexOf(0, at);
    return environ.subarray(at + key.length, end < 0 ? environ.length : end).toString('utf8');
  }
  return null;
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

/** A folder's entries; none when it cannot be read (gone, or not a folder). */
export function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
