import type { SandboxPlan } from './plan.js';

/** The bubblewrap executable: Debian's package puts it on the PATH. */
export const BWRAP = 'bwrap';

/**
 * The command line that runs `argv` in the sandbox `plan` describes, with bubblewrap:
 *
 * - new user, PID, IPC and UTS namespaces: the engine sees and signals only its own processes
 *   (`/proc` is its own); the network is shared, since engines call their model APIs;
 * - no `--die-with-parent`: as without a sandbox, an engine is not ended by the daemon's own end
 *   (a restart stops what is left, or takes it up again);
 * - the mounts in the plan's order: the system read-only, then what is covered, then the job's own;
 * - user namespaces stay allowed inside, so that an engine that sandboxes its own tools
 *   (Codex's bubblewrap) still can.
 */
export function bwrapArgv(plan: SandboxPlan, argv: readonly string[]): string[] {
  const args = [BWRAP, '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts'];
  for (const path of plan.system) args.push('--ro-bind', path, path);
  args.push('--dev', '/dev', '--proc', '/proc');
  for (const { path, by } of plan.covered) args.push(...(by === null ? ['--tmpfs', path] : ['--bind', by, path]));
  for (const path of plan.hiddenFiles) args.push('--ro-bind', '/dev/null', path);
  for (const { path } of plan.readOnly) args.push('--ro-bind', path, path);
  for (const { path } of plan.readWrite) args.push('--bind', path, path);
  for (const [name, value] of Object.entries(plan.env)) args.push('--setenv', name, value);
  args.push('--chdir', plan.cwd, '--', ...argv);
  return args;
}
