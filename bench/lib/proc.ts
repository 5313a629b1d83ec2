import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { sep } from 'node:path';
import { listProcesses, readStat } from '../../daemon/process/proc.js';
import { nowMs } from './util.js';

/** Clock ticks per second of /proc/<pid>/stat CPU times. */
export const CLK_TCK = readClockTicks();

function readClockTicks(): number {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const value = Number.parseInt(out.stdout ?? '', 10);
  return Number.isFinite(value) && value > 0 ? value : 100;
}

/** One reading of a process's CPU time and memory. */
export interface ProcSample {
  at: number;
  /** utime + stime of the process itself (not its children), in clock ticks. */
  cpuTicks: number;
  /** cutime + cstime: of its children it has waited for, in clock ticks. */
  childTicks: number;
  /** Resident set size now, and its peak (VmHWM), in KiB. */
  rssKb: number;
  hwmKb: number;
}

/** Reads /proc/<pid>/stat and /proc/<pid>/status; null when the process is gone. */
export function sampleProc(pid: number): ProcSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    // Fields after the command name (which may hold spaces): index 0 is field 3 (state), so utime (14) is 11, stime (15) is 12.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuTicks = Number(fields[11]) + Number(fields[12]);
    return { at: nowMs(), cpuTicks, childTicks: Number(fields[13]) + Number(fields[14]), rssKb: statusKb(status, 'VmRSS'), hwmKb: statusKb(status, 'VmHWM') };
  } catch {
    return null;
  }
}

function statusKb(status: string, key: string): number {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
  return match === null ? Number.NaN : Number(match[1]);
}

/** CPU used between two samples, as a percentage of one core. */
export function cpuPercent(a: ProcSample, b: ProcSample): number {
  const cpuMs = ((b.cpuTicks - a.cpuTicks) * 1000) / CLK_TCK;
  return (100 * cpuMs) / (b.at - a.at);
}

/** Watches a process's CPU over `windowMs`; returns the percentage of one core and the CPU ms used. */
export async function measureCpu(pid: number, windowMs: number): Promise<{ percent: number; cpuMs: number; windowMs: number }> {
  const a = sampleProc(pid);
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const b = sampleProc(pid);
  if (a === null || b === null) throw new Error(`process ${pid} went away while its CPU was measured`);
  return { percent: cpuPercent(a, b), cpuMs: ((b.cpuTicks - a.cpuTicks) * 1000) / CLK_TCK, windowMs: b.at - a.at };
}

/** The live processes (not this one) whose working directory is `dir` or below it: an engine and what it started there. */
export function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const { pid } of listProcesses()) {
    if (pid === process.pid) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    if ((cwd === dir || cwd.startsWith(dir + sep)) && processAlive(pid)) found.push(pid);
  }
  return found;
}

/**
 * The engine working in a job's `workspace`, as this process numbers it: a sandboxed fake engine
 * writes its pid file with its own namespace's pid, so the process is found by its working
 * folder instead, bubblewrap's own processes left out. Null when none runs there.
 */
export function engineIn(workspace: string): number | null {
  return processesIn(workspace).find((pid) => !commandLine(pid).startsWith('bwrap\0')) ?? null;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** True while the process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}

/**
 * Kills (SIGKILL, by pid) every process whose working directory is `dir` or below it: the fake
 * engines a benchmark's daemon started run in run folders under the benchmark's temp folder, and
 * so do the ones the benchmarks spawn directly. Only processes of this user are visible to
 * readlink, and none outside the folder is touched. Returns how many were killed.
 */
export function sweepProcesses(dir: string): number {
  const killed = new Set<number>();
  for (let pass = 0; pass < 5; pass += 1) {
    let found = 0;
    for (const pid of processesIn(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
        found += 1;
      } catch {
        // already gone
      }
    }
    if (found === 0) break;
  }
  return killed.size;
}
