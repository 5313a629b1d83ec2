import { readFile, writeFile } from 'node:fs/promises';

/** A process's resident memory now and its peak since the last `resetPeak` (or its start), in KiB. */
export interface Memory {
  rssKiB: number;
  peakRssKiB: number;
}

/** Reads /proc/<pid>/status. */
export async function memoryOf(pid: number): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssKiB: kib(status, 'VmRSS'), peakRssKiB: kib(status, 'VmHWM') };
}

/** Starts the peak (VmHWM) again from the current resident size, so that a peak measures what came after. */
export async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

function kib(status: string, key: string): number {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
  if (match === null) throw new Error(`no ${key} in /proc status`);
  return Number(match[1]);
}
