import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU affinity through util-linux `taskset` (Node has no API for it). Used where a comparison of
 * two processes must not depend on where the scheduler happens to place each one.
 */

/** The CPUs a process may run on (`/proc/<pid>/status` Cpus_allowed_list, e.g. "0-1"); null when unreadable. */
export function allowedCpus(pid: number): string | null {
  try {
    const match = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Expands a CPU list ("0-2,5") into CPU numbers. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',')) {
    const [from, to] = part.split('-').map((n) => Number.parseInt(n, 10));
    if (from === undefined || Number.isNaN(from)) continue;
    for (let cpu = from; cpu <= (to === undefined || Number.isNaN(to) ? from : to); cpu += 1) cpus.push(cpu);
  }
  return cpus;
}

/** Binds every thread of `pid` to `cpus`; false (with the reason) when taskset is missing or refuses. */
export function pinProcess(pid: number, cpus: string): { ok: true } | { ok: false; reason: string } {
  const out = spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], { encoding: 'utf8' });
  if (out.error !== undefined) return { ok: false, reason: `taskset: ${out.error.message}` };
  if (out.status !== 0) return { ok: false, reason: `taskset exited ${String(out.status)}: ${out.stderr.trim()}` };
  return { ok: true };
}
