import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BWRAP, bwrapCommand, bwrapOptions } from './bwrap.js';
import { handOver, openPlan } from './open-plan.js';
import { PRIVATE_TMP, type RunAs, type SandboxPlan } from './plan.js';
import { engineUser } from './run-as.js';
import { systemPaths, type SystemPath } from './system-paths.js';
import type { ShortRunner } from '../model/short-run.js';

/** How long the probe may take: starting a sandbox takes milliseconds. */
const PROBE_TIMEOUT_MS = 10_000;

/** Whether a sandbox can run here; `reason` says why not, in the probe's own words. */
export type SandboxProbe = { available: true } | { available: false; reason: string };

/** A user namespace inside the sandbox, as an engine that sandboxes its own tools with bubblewrap makes. */
const NESTED = [BWRAP, '--unshare-user', '--ro-bind', '/', '/', 'true'];

/**
 * Starts a sandbox of the kind every job gets (an empty root with the system shown, new
 * namespaces, a private /tmp, the engines' user), and in it a user namespace again, as an engine
 * that sandboxes its own tools would make: both must work. Fails where bubblewrap is missing,
 * where user namespaces are not allowed (a container started without them, a kernel that forbids
 * them to this user), or where the daemon, as root, cannot become the engines' user. With
 * `network`, the sandbox has a network namespace of its own too, as jobs with their own network
 * get (docs/network.md).
 */
export async function probeSandbox(run: ShortRunner, env: Readonly<Record<string, string>>, system: readonly SystemPath[], user: RunAs, switched: boolean, network = true): Promise<SandboxProbe> {
  const plan: SandboxPlan = {
    mounts: [
      ...system.map((one) => (one.kind === 'link' ? { kind: 'link' as const, path: one.path, target: one.target, what: '' } : { kind: 'bind' as const, path: one.path, source: one.path, access: 'read_only' as const, what: '', role: 'system' as const })),
      { kind: 'tmpfs', path: PRIVATE_TMP, sizeBytes: 1024 * 1024, what: '' },
    ],
    cwd: PRIVATE_TMP,
    env: {},
    runAs: switched ? user : null,
    program: null,
    network: null,
    own: { places: [], skills: [], home: '/' },
  };
  // Made only where a mount needs a file of the daemon's (none here): the probe needs no free disk space.
  const scratch = join(tmpdir(), `skilld-probe-${process.pid}`);
  let result;
  try {
    const opened = openPlan(plan, scratch);
    try {
      const { numbers, fds } = handOver(opened, 3);
      // The namespace alone: the bridge that a job's network starts needs nothing the probe lacks.
      const options = bwrapOptions({ ...opened.plan, network: network ? { bridge: { kind: 'node', program: process.execPath, shown: [] }, listeners: [] } : null }, numbers, { PATH: env['PATH'] ?? '/usr/bin:/bin' });
      result = await run([BWRAP, ...options, ...bwrapCommand(opened.plan, NESTED)], env, PROBE_TIMEOUT_MS, fds);
    } finally {
      opened.close();
    }
  } catch (error) {
    return { available: false, reason: `the system cannot be shown to a sandbox: ${(error as Error).message}` };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  if (result.ok) return { available: true };
  const said = `${result.stderr}`.trim().split('\n').slice(-2).join(' ').trim();
  const why = result.error ?? `exited with code ${String(result.code)}`;
  return { available: false, reason: `bubblewrap (bwrap) could not start a sandbox: ${said === '' ? why : `${why}: ${said}`}` };
}

/** The probe as a daemon with the default config would run it here (for the tests and benchmarks that need to know). */
export async function probeHere(run: ShortRunner, env: Readonly<Record<string, string>>): Promise<SandboxProbe> {
  const found = await engineUser(null, run);
  if ('problem' in found) return { available: false, reason: found.problem };
  return probeSandbox(run, env, systemPaths(), found.user, found.switched);
}
