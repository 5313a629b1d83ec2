import { sizeText } from '../../rpc/size.js';
import { NETWORK_DIR, bridgeScript, type Bridge, type BridgeListener } from './network-bridge.js';
import type { SystemPath } from './system-paths.js';

/**
 * What a job's engine may see: the contract of the sandbox as one value, an allow-list. The
 * sandbox starts from an empty root (a tmpfs, read-only once built) and shows only what the plan
 * names, each at its own path. `bwrapArgv` turns it into a command line, and docs/sandbox.md is
 * written from `describePlan` of the same value (a test keeps them in step).
 */
export interface SandboxPlan {
  /** What is shown, a folder before what is shown inside it. */
  readonly mounts: readonly Mount[];
  /** The working folder inside. */
  readonly cwd: string;
  /** Set in the engine's environment inside. */
  readonly env: Readonly<Record<string, string>>;
  /** The user the engine runs as when the daemon runs as root; null: the daemon's own user, in a user namespace. */
  readonly runAs: RunAs | null;
  /** The engine's program by its real path, started in place of the command's first word; null: as given. */
  readonly program: string | null;
  /**
   * The job's own network (docs/network.md): a namespace with loopback alone, where the bridge
   * (network-bridge.ts) runs first; null: the host's network.
   */
  readonly network: { bridge: Bridge; listeners: readonly BridgeListener[] } | null;
  /**
   * The daemon's own places: its state, socket, runtime and config (`places`), its skills
   * folders, and its user's home. A path a job's input names may be none of them nor hold one,
   * nor lie in the home's dot-files, checked on what was opened (input-paths.ts, `ownPlace`).
   */
  readonly own: { places: readonly string[]; skills: readonly string[]; home: string };
}

export type Access = 'read_only' | 'read_write';

/**
 * Whose a shown host path is: the system's and the engine's installation (root's, or the
 * operator's), the config's, the job's own home (where the daemon makes the places of what is
 * shown inside it), the job's other folders, or a path its input names (checked on what was opened).
 */
export type Role = 'system' | 'config' | 'home' | 'job' | 'input';

/**
 * One thing shown: a host path at its own path (`bind`); a copy of a file (`copy`, for an engine
 * that runs as another user than the file's owner); a text made by the daemon (`text`: the passwd
 * and group files); a link; an empty folder in memory.
 */
export type Mount =
  | { kind: 'bind'; path: string; source: string; access: Access; what: string; role: Role }
  | { kind: 'copy'; path: string; source: string; access: Access; what: string }
  | { kind: 'text'; path: string; text: string; what: string }
  | { kind: 'link'; path: string; target: string; what: string }
  | { kind: 'tmpfs'; path: string; sizeBytes: number; what: string };

/** An unprivileged user, by number and name. */
export interface RunAs {
  uid: number;
  gid: number;
  user: string;
  group: string;
}

/** The host's side of a sandbox: what the daemon shows every job of an engine. */
export interface HostPaths {
  system: readonly SystemPath[];
  /** The engine's program and the folders it is installed in (`installedProgram`); null when it is not found. */
  installed: { program: string; shown: readonly string[] } | null;
  /** `sandbox.read_only` and `engines.<name>.sandbox` of the config. */
  extra: { readOnly: readonly string[]; readWrite: readonly string[] };
  /** Who the engine is inside: `runAs` when the daemon is root, else the daemon's own user. */
  user: RunAs;
  /** Whether the engine runs as `user` by a switch from root (the daemon runs as root). */
  switchUser: boolean;
  /** The size of the private `/tmp`. */
  tmpBytes: number;
  own: SandboxPlan['own'];
  /** The bridge of a job's own network (network-bridge.ts). */
  bridge: Bridge;
}

/** A job's own network (docs/network.md): its folder of the daemon's sockets, what the bridge listens on, and the proxy's variables. */
export interface JobNetwork {
  folder: string;
  listeners: readonly BridgeListener[];
  env: Readonly<Record<string, string>>;
}

/** A folder of the job's own shown at another path: its home at the engine's HOME. */
export interface Placed {
  path: string;
  by: string;
}

/** The job's side of the sandbox. */
export interface JobPaths {
  workspace: string;
  /** The job's snapshot of its skill. */
  skill: string;
  /** Its home, at the engine's HOME; null when HOME is `/`. */
  home: Placed | null;
  /** Its engine home, at the engine's home folder, when that is not below HOME (docs/sandbox.md, "Engine homes"). */
  engineHome: Placed | null;
  /**
   * What of the engine's configured home it works with: settings files read-only, credentials read
   * and written, settings folders read-only (never copied: the engine's user must be able to read them).
   */
  shared: { readOnly: readonly string[]; readWrite: readonly string[]; folders: readonly string[] };
  /** Paths the job's input names, that its skill works on (`input_paths` in runner.json). */
  input: { readOnly: readonly string[]; readWrite: readonly string[] };
  /** Its own network; null: the host's. */
  network: JobNetwork | null;
}

/** `/tmp` is private to each sandbox: other jobs' and the daemon's temporary files are out of sight. */
export const PRIVATE_TMP = '/tmp';

/**
 * git refuses a repository another user owns ("dubious ownership"), to keep that user's hooks
 * from running as itself. An engine that runs as another user than the daemon's is shown the
 * repositories its job names, by the operator's choice, and nothing of its own to protect: git
 * trusts every folder inside (a config given through the environment, git 2.31 or later).
 */
const GIT_TRUSTS_SHOWN = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' };

/** The plan for one engine process of a job. */
export function planSandbox(host: HostPaths, job: JobPaths): SandboxPlan {
  const bind = (role: Role, access: Access, what: string) => (path: string): Mount => ({ kind: 'bind', path, source: path, access, what, role });
  const placed = (what: string) => (one: Placed): Mount => ({ kind: 'bind', path: one.path, source: one.by, access: 'read_write', what: `${what}: \`${one.by}\``, role: 'home' });
  // A file of the configured home is the daemon user's: an engine that runs as another user gets a copy.
  const shared = (access: Access, what: string) => (path: string): Mount => (host.switchUser ? { kind: 'copy', path, source: path, access, what: `${what} (a copy: the engine runs as ${host.user.user})` } : bind('config', access, what)(path));
  const mounts: Mount[] = [
    ...host.system.map((one): Mount => (one.kind === 'link' ? { kind: 'link', path: one.path, target: one.target, what: 'a link, as on the host' } : bind('system', 'read_only', 'the system, so that tools work')(one.path))),
    { kind: 'text', path: '/etc/passwd', text: passwd(host.user, job.home?.path ?? '/'), what: `made by the daemon: root and ${host.user.user} (${host.user.uid}) alone` },
    { kind: 'text', path: '/etc/group', text: `root:x:0:\n${host.user.group}:x:${host.user.gid}:\n`, what: `made by the daemon: root and ${host.user.group} (${host.user.gid}) alone` },
    ...(host.installed?.shown ?? []).map(bind('system', 'read_only', "the engine's installation")),
    ...host.extra.readOnly.map(bind('config', 'read_only', 'a path from the config')),
    ...host.extra.readWrite.map(bind('config', 'read_write', 'a path from the config')),
    { kind: 'tmpfs', path: PRIVATE_TMP, sizeBytes: host.tmpBytes, what: `an empty folder of the job's own, in memory, at most ${sizeText(host.tmpBytes)}, gone with it` },
    ...(job.home === null ? [] : [placed("the job's own home")(job.home)]),
    ...(job.engineHome === null ? [] : [placed("the job's own engine home")(job.engineHome)]),
    ...job.shared.readOnly.map(shared('read_only', "the engine's settings, from its configured home")),
    ...job.shared.readWrite.map(shared('read_write', "the engine's credentials, from its configured home")),
    ...job.shared.folders.map(bind('config', 'read_only', "the engine's settings, from its configured home")),
    bind('job', 'read_only', "the job's own skill snapshot")(job.skill),
    bind('job', 'read_write', "the job's own workspace")(job.workspace),
    ...job.input.readOnly.map(bind('input', 'read_only', 'a path its input names')),
    ...job.input.readWrite.map(bind('input', 'read_write', 'a path its input names')),
    ...(job.network === null ? [] : networkMounts(host, job.network)),
  ];
  return {
    mounts: outermostFirst(mounts),
    cwd: job.workspace,
    // Claude Code runs with its permission checks bypassed as root only when told it is sandboxed.
    env: { IS_SANDBOX: '1', ...(host.switchUser ? GIT_TRUSTS_SHOWN : {}), ...job.network?.env },
    runAs: host.switchUser ? host.user : null,
    program: host.installed?.program ?? null,
    network: job.network === null ? null : { bridge: host.bridge, listeners: job.network.listeners },
    own: host.own,
  };
}

/** What a job's own network shows: the daemon's sockets for it, the bridge's script, and the node it runs on where that is not the system's. */
function networkMounts(host: HostPaths, network: JobNetwork): Mount[] {
  // A network that could not be opened has no way out, and no folder to show.
  const folder: Mount[] = network.listeners.length === 0 ? [] : [{ kind: 'bind', path: NETWORK_DIR, source: network.folder, access: 'read_only', what: `the job's own way out: the daemon's proxy and forwarded ports, \`${network.folder}\``, role: 'job' }];
  return [
    ...folder,
    { kind: 'text', ...bridgeScript(host.bridge), what: `made by the daemon: the bridge (${host.bridge.kind}) from the job's loopback to the daemon's sockets` },
    ...(host.bridge.kind === 'node' ? host.bridge.shown : []).map((path): Mount => ({ kind: 'bind', path, source: path, access: 'read_only', what: 'the node the bridge runs on', role: 'system' })),
  ];
}

/** The passwd file inside: root, and the engine's user with the job's home. */
function passwd(user: RunAs, home: string): string {
  return `root:x:0:0:root:/root:/bin/sh\n${user.user}:x:${user.uid}:${user.gid}::${home}:/bin/sh\n`;
}

/**
 * Each path once (the first mount of it stands), a folder before those below it: a mount over a
 * parent would cover one made below it. Mounts that do not nest keep their order.
 */
function outermostFirst(mounts: readonly Mount[]): Mount[] {
  const seen = new Set<string>();
  const once = mounts.filter((mount) => !seen.has(mount.path) && seen.add(mount.path));
  const depth = (path: string): number => path.split('/').filter((part) => part !== '').length;
  return once.map((mount, i) => ({ mount, i })).sort((a, b) => depth(a.mount.path) - depth(b.mount.path) || a.i - b.i).map(({ mount }) => mount);
}

