import { execa } from 'execa';
import type { ShortRun } from '../model/short-run.js';

/**
 * Runs a short command (`--help`, `--version`) in its own process group with stdin closed, and
 * kills the whole group at the time limit. `fds` are handed to it as descriptors 3, 4, … (a
 * sandbox's open paths).
 */
export async function runShort(argv: readonly string[], env: Readonly<Record<string, string>>, timeoutMs: number, fds: readonly number[] = []): Promise<ShortRun> {
  const [file, ...args] = argv as [string, ...string[]];
  const child = execa(file, args, {
    env,
    extendEnv: false,
    // Descriptors are handed to the process as they are (execa's types name only a few numbers).
    stdio: ['ignore', 'pipe', 'pipe', ...fds] as unknown as ['ignore', 'pipe', 'pipe'],
    reject: false,
    detached: true,
    cleanup: true,
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 1024 * 1024,
  });
  const result = await child;
  if (child.pid !== undefined) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone, as it should be
    }
  }
  const error = result.timedOut ? `timed out after ${timeoutMs} ms` : result.exitCode === undefined ? (result.shortMessage ?? 'could not start') : null;
  return { ok: result.exitCode === 0, timedOut: result.timedOut, code: result.exitCode ?? null, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? ''), error };
}
