import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The mark every engine process of a job carries in its environment (daemon/process/proc.ts). */
const MARK = 'SKILLD_JOB_ID';

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function pidNamespace(pid: number | 'self'): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

function allPids(): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}

function marked(pid: number, jobId: string): boolean {
  return (read(`/proc/${pid}/environ`) ?? '').split('\0').includes(`${MARK}=${jobId}`);
}

/** The PID namespace of the job's sandbox: that of a process marked with the job, other than this one's; null without a sandbox. */
function sandboxNamespace(jobId: string): string | null {
  const own = pidNamespace('self');
  for (const pid of allPids()) {
    if (!marked(pid, jobId)) continue;
    const ns = pidNamespace(pid);
    if (ns !== null && ns !== own) return ns;
  }
  return null;
}

/**
 * The pid, as this process sees it, of the process a job's engine knows as `pid`: in a sandbox
 * the engine has a PID namespace of its own, and writes pids of that namespace, and the engine
 * must still run. Without a sandbox, `pid` itself.
 */
export function hostPid(jobId: string, pid: number, sandboxed: boolean): number {
  if (!sandboxed) return pid;
  const ns = sandboxNamespace(jobId);
  if (ns === null) throw new Error(`job ${jobId} runs in a sandbox, but no process of it runs now: its pid ${pid} cannot be told`);
  for (const candidate of allPids()) {
    if (pidNamespace(candidate) !== ns) continue;
    const nspids = /^NSpid:\s+(.+)$/m.exec(read(`/proc/${candidate}/status`) ?? '')?.[1]?.trim().split(/\s+/) ?? [];
    if (Number(nspids[nspids.length - 1]) === pid) return candidate;
  }
  throw new Error(`no process of job ${jobId}'s sandbox is ${pid} in it`);
}

/** The processes (pids as this process sees them) that belong to a job: marked with it, or in its sandbox. */
export function jobProcesses(jobId: string): number[] {
  const ns = sandboxNamespace(jobId);
  return allPids().filter((pid) => pid !== process.pid && (marked(pid, jobId) || (ns !== null && pidNamespace(pid) === ns)));
}
