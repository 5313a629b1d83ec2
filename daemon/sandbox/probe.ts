import type { ShortRunner } from '../engines/probe.js';
import { BWRAP, bwrapArgv } from './bwrap.js';

/** How long the probe may take: starting a sandbox takes milliseconds. */
const PROBE_TIMEOUT_MS = 10_000;

/** Whether a sandbox can run here; `reason` says why not, in the probe's own words. */
export type SandboxProbe = { available: true } | { available: false; reason: string };

/** A user namespace inside the sandbox, as an engine that sandboxes its own tools with bubblewrap makes. */
const NESTED = [BWRAP, '--unshare-user', '--ro-bind', '/', '/', 'true'];

/**
 * Starts a sandbox of the kind every job gets (new user and PID namespaces, the system read-only,
 * its own /proc, a private /tmp), and in it a user namespace again, as an engine that sandboxes
 * its own tools would make: both must work. Fails where bubblewrap is missing or user namespaces
 * are not allowed (a container started without them, a kernel that forbids them to this user).
 */
export async function probeSandbox(run: ShortRunner, env: Readonly<Record<string, string>>): Promise<SandboxProbe> {
  const plan = { system: ['/'], covered: [{ path: '/tmp', by: null }], hiddenFiles: [], readOnly: [], readWrite: [], cwd: '/', env: {} };
  const result = await run(bwrapArgv(plan, NESTED), env, PROBE_TIMEOUT_MS);
  if (result.ok) return { available: true };
  const said = `${result.stderr}`.trim().split('\n').slice(-2).join(' ').trim();
  const why = result.error ?? `exited with code ${String(result.code)}`;
  return { available: false, reason: `bubblewrap (bwrap) could not start a sandbox: ${said === '' ? why : `${why}: ${said}`}` };
}
