import { existsSync } from 'node:fs';
import { SkilldError } from '../../rpc/errors.js';
import { isWithin } from '../../rpc/within-folder.js';
import type { SandboxMode, SandboxPaths } from '../config.js';
import type { EngineName, Isolation, Job } from '../jobs/job.js';
import { engineHome } from './engine-homes.js';
import { refusePath, type InputPath } from './input-paths.js';
import { jobHomes } from './job-home.js';
import { planSandbox, type DaemonPaths, type SandboxPlan } from './plan.js';
import type { SandboxProbe } from './probe.js';

/** What `daemon/status` says of the sandbox. */
export interface SandboxView {
  mode: SandboxMode;
  /** What new jobs get. */
  isolation: Isolation;
  /** Why jobs run without a sandbox (the probe's words, or the config); null when they run in one. */
  reason: string | null;
}

/**
 * The daemon's sandbox for jobs: what the probe at start found, what each new job gets, and the
 * plan of each engine process of a job that runs in one.
 */
export class JobSandbox {
  readonly view: SandboxView;
  readonly #daemon: DaemonPaths;
  readonly #extra: Readonly<Record<EngineName, SandboxPaths>>;
  readonly #asRoot: boolean;
  /** The daemon's own places, never shown to a job through its input. */
  readonly #own: readonly string[];

  /** `asRoot`: the daemon runs as root. */
  constructor(mode: SandboxMode, probe: SandboxProbe, daemon: DaemonPaths, extra: Readonly<Record<EngineName, SandboxPaths>>, asRoot: boolean) {
    this.#daemon = daemon;
    this.#own = [daemon.stateDir, daemon.socketDir, ...daemon.skillsDirs, ...daemon.engineHomes, ...(daemon.runtimeDir === null ? [] : [daemon.runtimeDir]), ...(daemon.configFile === null ? [] : [daemon.configFile])];
    this.#extra = extra;
    this.#asRoot = asRoot;
    if (mode === 'off') this.view = { mode, isolation: 'none', reason: 'the config turns it off (sandbox: "off")' };
    else if (probe.available) this.view = { mode, isolation: 'sandbox', reason: null };
    else this.view = { mode, isolation: 'none', reason: probe.reason };
  }

  /** In `required` mode without a sandbox, why no job may start; null when jobs may start. */
  refusal(): SkilldError | null {
    if (this.view.mode !== 'required' || this.view.isolation === 'sandbox') return null;
    return new SkilldError('SANDBOX_UNAVAILABLE', `the sandbox is required (sandbox: "required") and cannot run here: ${this.view.reason ?? ''}`);
  }

  /**
   * Why a new job of `engine` is refused: no job may start (see `refusal`), or Claude Code would
   * run as root outside a sandbox, which it refuses with its permission checks bypassed.
   */
  refuseJob(engine: EngineName): SkilldError | null {
    const refused = this.refusal();
    if (refused !== null || engine !== 'claude' || !this.#asRoot || this.view.isolation === 'sandbox') return refused;
    return new SkilldError('ENGINE_UNAVAILABLE', `Claude Code does not run with its permission checks bypassed as root outside a sandbox, and this daemon runs as root without one (${this.view.reason ?? ''}); run the daemon as another user, or let the sandbox run`);
  }

  /**
   * The plan for an engine process of `job` (null when the job runs without a sandbox), which
   * runs with `env`, in the job's run folder `folder`; `paths` are those its input names. A
   * path that is gone, or that the daemon refuses (`checkInputPaths`), is not shown.
   */
  planFor(job: Pick<Job, 'engine' | 'isolation'>, folder: JobFolder, env: Readonly<Record<string, string>>, paths: readonly InputPath[]): SandboxPlan | null {
    if (job.isolation !== 'sandbox') return null;
    const engine = engineHome(job.engine, env, this.#daemon.home);
    const extra = this.#extra[job.engine];
    const present = (paths: readonly string[]): string[] => paths.filter((path) => existsSync(path));
    const shown = (given: readonly InputPath[]): string[] => given.flatMap((one) => (refusePath(one, this.#own, this.#daemon.home) === null ? [one.path] : []));
    // A configured home that is not there now hides nothing (and a mount needs a place).
    return planSandbox({ ...this.#daemon, engineHomes: present(this.#daemon.engineHomes) }, {
      workspace: folder.workspace,
      skill: folder.skill,
      attempts: folder.attempts,
      homes: jobHomes(engine, folder.root),
      shared: { readOnly: present(engine.settings), readWrite: present(engine.credentials) },
      extra: { readOnly: extra.read_only, readWrite: extra.read_write },
      input: {
        readOnly: shown(paths.filter((one) => one.access === 'read_only')),
        readWrite: shown(paths.filter((one) => one.access === 'read_write')),
      },
    });
  }

  /**
   * The hidden folder that holds `path` in every sandbox of `engine`'s jobs (an engine installed
   * under the daemon user's home, or in `/tmp`), or null when its sandboxes show it.
   */
  hiding(engine: EngineName, path: string): string | null {
    const extra = this.#extra[engine];
    if ([...extra.read_only, ...extra.read_write].some((shown) => isWithin(shown, path))) return null;
    const plan = planSandbox(this.#daemon, { workspace: '/', skill: '/', attempts: '/', homes: [], shared: { readOnly: [], readWrite: [] }, extra: { readOnly: [], readWrite: [] }, input: { readOnly: [], readWrite: [] } });
    return plan.covered.findLast((cover) => isWithin(cover.path, path))?.path ?? null;
  }

  /** Why the paths a new job's input names may not be shown to it (INPUT_INVALID), or null. */
  checkInputPaths(paths: readonly InputPath[]): SkilldError | null {
    for (const path of paths) {
      const refused = refusePath(path, this.#own, this.#daemon.home);
      if (refused !== null) return refused;
    }
    return null;
  }
}

/** The folders of a job's run folder its sandbox is built from. */
export interface JobFolder {
  root: string;
  workspace: string;
  /** The job's snapshot of its skill. */
  skill: string;
  attempts: string;
}
