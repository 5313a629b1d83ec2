import { definedEnv } from './process/env.js';
import { runShort } from './process/run-short.js';

/** How long systemd-notify may take before it is given up on. */
const NOTIFY_TIMEOUT_MS = 5000;

/**
 * Tells systemd the daemon's state (`READY=1`, `STOPPING=1`) when it runs under `Type=notify`
 * (NOTIFY_SOCKET set), through the `systemd-notify` tool. Returns an error text, or null.
 */
export async function notifySystemd(state: 'READY=1' | 'STOPPING=1', env: NodeJS.ProcessEnv): Promise<string | null> {
  const socket = env['NOTIFY_SOCKET'];
  if (socket === undefined || socket === '') return null;
  const run = await runShort(['systemd-notify', `--pid=${process.pid}`, state], definedEnv(env), NOTIFY_TIMEOUT_MS);
  return run.ok ? null : `systemd-notify ${state} failed: ${run.error ?? run.stderr.trim()}`;
}
