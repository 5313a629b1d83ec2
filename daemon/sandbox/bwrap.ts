import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { isWithin } from '../../rpc/within-folder.js';
import { bridgeCommand } from './network-bridge.js';
import type { Mount, RunAs, SandboxPlan } from './plan.js';

/** The bubblewrap executable: Debian's package puts it on the PATH. */
export const BWRAP = 'bwrap';
/** util-linux's setpriv: how a sandbox started by root becomes an unprivileged user before the engine starts. */
export const SETPRIV = 'setpriv';

/** The descriptor each shown host path, copy and made text is open as, in the sandbox's outer process. */
export type PlanFds = ReadonlyMap<Mount, number>;

/**
 * The command line that runs `argv` in the sandbox `plan` describes, with bubblewrap, its
 * paths given as descriptors (`fds`, from `openPlan`):
 *
 * - new PID, IPC, UTS and cgroup namespaces, and a new session (no TIOCSTI into a terminal); a
 *   network namespace of its own, with loopback alone, where the plan gives the job its own
 *   network (the bridge then starts the engine: network-bridge.ts), else the host's;
 * - as the daemon's own user: a user namespace of its own with every capability dropped; as root:
 *   no user namespace (it would map the engine to the host's root), and `setpriv` makes the
 *   engine the plan's unprivileged user, with no capabilities left to gain back;
 * - an empty root (a tmpfs, made read-only once built), `/dev` of its own, a `/proc` of its own
 *   with `/proc/sys` read-only, then the plan's mounts in order;
 * - exactly `env` (and the plan's) in the engine's environment;
 * - no `--die-with-parent`: as without a sandbox, an engine is not ended by the daemon's own end
 *   (a restart stops what is left, or takes it up again);
 * - user namespaces stay allowed inside, so that an engine that sandboxes its own tools
 *   (Codex's bubblewrap) still can.
 */
export function bwrapArgv(plan: SandboxPlan, fds: PlanFds, argv: readonly string[], env: Readonly<Record<string, string>>): string[] {
  return [BWRAP, ...bwrapOptions(plan, fds, env), ...bwrapCommand(plan, argv)];
}

/** bubblewrap's options for `plan` (see `bwrapArgv`): everything before its `--`. */
export function bwrapOptions(plan: SandboxPlan, fds: PlanFds, env: Readonly<Record<string, string>>): string[] {
  const args = [...(plan.runAs === null ? ['--unshare-user', '--cap-drop', 'ALL'] : []), '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', ...(plan.network === null ? [] : ['--unshare-net']), '--new-session'];
  args.push('--tmpfs', '/', '--dev', '/dev', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  if (existsSync('/proc/sysrq-trigger')) args.push('--ro-bind', '/proc/sysrq-trigger', '/proc/sysrq-trigger');
  const made = new Set(['/', '/dev', '/proc']);
  for (const mount of plan.mounts) {
    args.push(...parents(mount.path, plan.mounts, made), ...mountArgs(mount, fds));
    made.add(mount.path);
  }
  // The engine's environment is what it is given and nothing else: not what the daemon's own
  // process holds, nor what anything between them adds.
  args.push('--clearenv');
  for (const [name, value] of Object.entries({ ...env, ...plan.env })) args.push('--setenv', name, value);
  args.push('--remount-ro', '/', '--chdir', plan.cwd);
  return args;
}

/**
 * What bubblewrap runs (see `bwrapArgv`): its `--`, then the engine, by its real path and as the
 * plan's user, behind the bridge of its own network where it has one.
 */
export function bwrapCommand(plan: SandboxPlan, argv: readonly string[]): string[] {
  const [first, ...rest] = argv;
  const bridge = plan.network === null ? [] : bridgeCommand(plan.network.bridge, plan.network.listeners);
  return ['--', ...(plan.runAs === null ? [] : becomeUser(plan.runAs)), ...bridge, ...(first === undefined ? [] : [plan.program ?? first, ...rest])];
}

/** `setpriv` as root inside the sandbox: the user and group, no other groups, no capabilities in any set. */
export function becomeUser(user: RunAs): string[] {
  return [SETPRIV, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--'];
}

/** The folders to make (mode 0755) in the empty root before `path` can be shown: those no mount made or holds. */
function parents(path: string, mounts: readonly Mount[], made: Set<string>): string[] {
  const missing: string[] = [];
  for (let dir = dirname(path); !made.has(dir); dir = dirname(dir)) {
    // Inside a folder shown from the host, the place is there already (or made by openPlan).
    if (mounts.some((mount) => mount.kind === 'bind' && made.has(mount.path) && isWithin(mount.path, dir))) break;
    missing.unshift(dir);
  }
  for (const dir of missing) made.add(dir);
  return missing.flatMap((dir) => ['--dir', dir]);
}

function mountArgs(mount: Mount, fds: PlanFds): string[] {
  const fd = (): string => {
    const found = fds.get(mount);
    if (found === undefined) throw new Error(`no descriptor for ${mount.path}`);
    return String(found);
  };
  switch (mount.kind) {
    case 'bind':
      return [mount.access === 'read_only' ? '--ro-bind-fd' : '--bind-fd', fd(), mount.path];
    case 'copy':
      return mount.access === 'read_only' ? ['--perms', '0444', '--ro-bind-data', fd(), mount.path] : ['--perms', '0666', '--bind-data', fd(), mount.path];
    case 'text':
      return ['--perms', '0444', '--ro-bind-data', fd(), mount.path];
    case 'link':
      return ['--symlink', mount.target, mount.path];
    case 'tmpfs':
      return ['--perms', '1777', '--size', String(mount.sizeBytes), '--tmpfs', mount.path];
  }
}
