import { readlinkSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { listProcesses } from '../../daemon/process/proc.js';

/** A fresh folder for a private daemon, short enough for its socket; its real path. */
export async function makeTempFolder(prefix: string): Promise<string> {
  return realpath(await mkdtemp(join(tempBase(prefix), prefix)));
}

/** A Unix socket path holds at most 107 bytes: a long TMPDIR falls back to /tmp. */
const SOCKET_PATH_MAX = 107;

function tempBase(prefix: string): string {
  const base = tmpdir();
  return Buffer.byteLength(join(base, `${prefix}XXXXXX`, 'skilld.sock')) <= SOCKET_PATH_MAX ? base : '/tmp';
}

/** Stops any process still working in the folder (none, after a clean daemon stop), then removes it. */
export async function removeFolder(dir: string): Promise<void> {
  stopProcessesIn(dir);
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** SIGKILLs any process still working in the folder: what a daemon that did not stop cleanly left. */
export function stopProcessesIn(dir: string): void {
  for (const pid of processesIn(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** The live processes, other than this one, whose working directory is `dir` or below it. */
export function processesIn(dir: string): number[] {
  return listProcesses()
    .map((p) => p.pid)
    .filter((pid) => {
      if (pid === process.pid) return false;
      try {
        const cwd = readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, '');
        return cwd === dir || cwd.startsWith(dir + sep);
      } catch {
        return false;
      }
    });
}
