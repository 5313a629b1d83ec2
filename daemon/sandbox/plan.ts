import { isWithin } from '../../rpc/within-folder.js';

/**
 * What a job's engine may see: the contract of the sandbox as one value, built from the daemon's
 * folders, the job's own and the engine's. `bwrapArgv` turns it into a command line, and
 * docs/sandbox.md is written from `describePlan` of the same value (a test keeps them in step).
 */
export interface SandboxPlan {
  /** Seen read-only: the system, so that tools work. Mounted first. */
  readonly system: readonly string[];
  /**
   * Folders whose contents are replaced, outermost first: by an empty folder of the sandbox's own
   * (a private, writable tmpfs; `by` null), or by a folder of the job's own (`by`, read and written).
   */
  readonly covered: readonly Cover[];
  /** Replaced by an empty file. */
  readonly hiddenFiles: readonly string[];
  /** Shown read-only at their own paths. Mounted after what is covered, so that they show through. */
  readonly readOnly: readonly Shown[];
  /** Shown read and written at their own paths. Mounted last. */
  readonly readWrite: readonly Shown[];
  /** The working folder inside. */
  readonly cwd: string;
  /** Set in the engine's environment inside. */
  readonly env: Readonly<Record<string, string>>;
}

/** A folder replaced: by an empty one (`by` null) or by the job's own folder `by`. */
export interface Cover {
  readonly path: string;
  readonly by: string | null;
}

/** A path shown in the sandbox, and what it is (docs/sandbox.md's words). */
export interface Shown {
  readonly path: string;
  readonly what: string;
}

/** The daemon's own folders and files, hidden from every job. */
export interface DaemonPaths {
  stateDir: string;
  skillsDirs: readonly string[];
  /** The folder the socket is in. */
  socketDir: string;
  /** The config file, when one was read. */
  configFile: string | null;
  /** The daemon user's home (its keys, `.pgpass`, shell history, engines' homes) and runtime folder. */
  home: string;
  runtimeDir: string | null;
  /** The engines' configured home folders (`~/.codex`, `CODEX_HOME=/srv/codex`, …). */
  engineHomes: readonly string[];
}

/** The job's side of the sandbox. */
export interface JobPaths {
  workspace: string;
  /** The job's snapshot of its skill. */
  skill: string;
  /** The job's attempt folders (prompts, logs). */
  attempts: string;
  /** Folders of the job's own shown in place of others: its home at the engine's HOME, its engine home (docs/sandbox.md, "Engine homes"). */
  homes: readonly Cover[];
  /** Files of the engine's configured home it works with: settings read-only, credentials read and written. */
  shared: { readOnly: readonly string[]; readWrite: readonly string[] };
  /** Extra paths from `engines.<name>.sandbox` in the config. */
  extra: { readOnly: readonly string[]; readWrite: readonly string[] };
  /** Paths the job's input names, that its skill works on (`input_paths` in runner.json). */
  input: { readOnly: readonly string[]; readWrite: readonly string[] };
}

/** `/tmp` is private to each sandbox: other jobs' and the daemon's temporary files are out of sight. */
const PRIVATE_TMP = '/tmp';

/** The plan for one engine process of a job. */
export function planSandbox(daemon: DaemonPaths, job: JobPaths): SandboxPlan {
  const hidden = [PRIVATE_TMP, daemon.home, ...(daemon.runtimeDir === null ? [] : [daemon.runtimeDir]), daemon.socketDir, daemon.stateDir, ...daemon.skillsDirs];
  // Engine homes below the daemon's home are hidden with it.
  hidden.push(...daemon.engineHomes.filter((folder) => !isWithin(daemon.home, folder)));
  // What a home of the job's own replaces is out of sight already, and what lies below it: nothing
  // of the daemon's is in the job's home, and the job's own engine home is there.
  const ownedBelow = (path: string): boolean => job.homes.some((home) => isWithin(home.path, path));
  const covered = [...job.homes, ...unique(hidden).filter((path) => !ownedBelow(path)).map((path) => ({ path, by: null }))];
  const shown = (what: string) => (path: string): Shown => ({ path, what });
  return {
    system: ['/'],
    covered: outermostFirst(covered),
    hiddenFiles: daemon.configFile === null ? [] : [daemon.configFile],
    readOnly: uniqueShown([
      shown("the job's own skill snapshot")(job.skill),
      shown("the job's own attempts: prompts and logs")(job.attempts),
      ...job.shared.readOnly.map(shown("the engine's settings, from its configured home")),
      ...job.extra.readOnly.map(shown('an extra path from the config')),
      ...job.input.readOnly.map(shown('a path its input names')),
    ]),
    readWrite: uniqueShown([
      shown("the job's own workspace")(job.workspace),
      ...job.shared.readWrite.map(shown("the engine's credentials, from its configured home")),
      ...job.extra.readWrite.map(shown('an extra path from the config')),
      ...job.input.readWrite.map(shown('a path its input names')),
    ]),
    cwd: job.workspace,
    // Claude Code runs with its permission checks bypassed as root only when told it is sandboxed.
    env: { IS_SANDBOX: '1' },
  };
}

/** Paths in order of first appearance, each once. */
function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}

function uniqueShown(shown: readonly Shown[]): Shown[] {
  const byPath = new Map<string, Shown>();
  for (const one of shown) if (!byPath.has(one.path)) byPath.set(one.path, one);
  return [...byPath.values()];
}

/** A folder before those below it: a mount over a parent would cover one made over its child. */
function outermostFirst(covers: readonly Cover[]): Cover[] {
  const depth = (path: string): number => path.split('/').filter((part) => part !== '').length;
  return [...covers].sort((a, b) => depth(a.path) - depth(b.path));
}
