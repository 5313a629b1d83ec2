import { existsSync, statSync } from 'node:fs';
import { SkilldError } from '../../rpc/errors.js';
import type { SandboxMode } from '../base/config.js';
import type { EngineName, Isolation, Job } from '../model/job.js';
import { engineHome } from './engine-homes.js';
import { refuseInputPaths, ownPlace, type InputPath } from './input-paths.js';
import { installedProgram } from './install-folder.js';
import { claim, jobHomes } from './job-home.js';
import { decideNetwork, type NetworkView } from './network-mode.js';
import type { Bridge } from './network-bridge.js';
import { planSandbox, type JobNetwork, type RunAs, type SandboxPlan } from './plan.js';
import type { SandboxProbe } from './probe.js';
import type { SystemPath } from './system-paths.js';

/** What `daemon/status` says of the sandbox. */
export interface SandboxView {
  mode: SandboxMode;
  /** What new jobs get. */
  isolation: Isolation;
  /** Why jobs run without a sandbox (the probe's words, or the config); null when they run in one. */
  reason: string | null;
  /** Who engines are in their sandboxes, and whether that is another user than the daemon's (a daemon that runs as root); null without a sandbox. */
  user: { name: string; uid: number; gid: number; switched: boolean } | null;
}

/** What the daemon shows every job, decided at start (open-sandbox.ts). */
export interface SandboxSetup {
  mode: SandboxMode;
  probe: SandboxProbe;
  /** The daemon's own places (plan.ts, `own`). */
  own: SandboxPlan['own'];
  /** The engine's user inside, and whether the daemon switches to it (it runs as root). */
  user: RunAs;
  switched: boolean;
  system: readonly SystemPath[];
  /** Each engine's command and the paths the config adds to its sandboxes. */
  engines: Readonly<Record<EngineName, { command: readonly string[]; readOnly: readonly string[]; readWrite: readonly string[] }>>;
  /** The daemon runs as root. */
  asRoot: boolean;
  /** The bridge of a job's own network (network-bridge.ts). */
  bridge: Bridge;
  /** What decides jobs' network. */
  network: Parameters<typeof decideNetwork>[0];
}

/**
 * The daemon's sandbox for jobs: what the probe at start found, what each new job gets, and the
 * plan of each engine process of a job that runs in one.
 */
export class JobSandbox {
  readonly view: SandboxView;
  /** What `daemon/status` says of jobs' network (docs/network.md). */
  readonly network: NetworkView;
  readonly #setup: SandboxSetup;
  /** Why no job may start for want of its own network; null when they may. */
  readonly #networkRefusal: string | null;

  constructor(setup: SandboxSetup) {
    this.#setup = setup;
    const { mode, probe, user, switched } = setup;
    const shown = { name: user.user, uid: user.uid, gid: user.gid, switched };
    if (mode === 'off') this.view = { mode, isolation: 'none', reason: 'the config turns it off (sandbox: "off")', user: null };
    else if (probe.available) this.view = { mode, isolation: 'sandbox', reason: null, user: shown };
    else this.view = { mode, isolation: 'none', reason: probe.reason, user: null };
    const network = decideNetwork(setup.network, this.view.isolation, this.view.reason, setup.bridge.kind);
    this.network = network.view;
    this.#networkRefusal = network.refusal;
  }

  /** Whether new jobs' engines get a network of their own (docs/network.md). */
  get ownNetwork(): boolean {
    return this.network.mode === 'isolated' && this.#networkRefusal === null;
  }

  /**
   * Why no job may start, or null when jobs may: the sandbox is required (`sandbox: "required"`)
   * and cannot run, or a network of their own is (`network: "isolated"`) and cannot be made.
   */
  refusal(): SkilldError | null {
    if (this.view.mode === 'required' && this.view.isolation !== 'sandbox') return new SkilldError('SANDBOX_UNAVAILABLE', `the sandbox is required (sandbox: "required") and cannot run here: ${this.view.reason ?? ''}`);
    return this.#networkRefusal === null ? null : new SkilldError('SANDBOX_UNAVAILABLE', this.#networkRefusal);
  }

  /**
   * Why a new job of `engine` is refused: no job may start (see `refusal`), or Claude Code would
   * run as root outside a sandbox, which it refuses with its permission checks bypassed.
   */
  refuseJob(engine: EngineName): SkilldError | null {
    const refused = this.refusal();
    if (refused !== null || engine !== 'claude' || !this.#setup.asRoot || this.view.isolation === 'sandbox') return refused;
    return new SkilldError('ENGINE_UNAVAILABLE', `Claude Code does not run with its permission checks bypassed as root outside a sandbox, and this daemon runs as root without one (${this.view.reason ?? ''}); run the daemon as another user, or let the sandbox run`);
  }

  /**
   * The plan for an engine process of `job` (null when the job runs without a sandbox), which
   * runs with `env`, in the job's run folder `folder`; `paths` are those its input names;
   * `network` its own network (null: the host's). The
   * job's homes are made here the first time (job-home.ts), and its folders given to the engine's
   * user where that is not the daemon's.
   */
  planFor(job: Pick<Job, 'engine' | 'isolation'>, folder: JobFolder, env: Readonly<Record<string, string>>, paths: readonly InputPath[], tmpBytes: number, network: JobNetwork | null): SandboxPlan | null {
    if (job.isolation !== 'sandbox') return null;
    const setup = this.#setup;
    const owner = setup.switched ? { uid: setup.user.uid, gid: setup.user.gid } : null;
    const engine = engineHome(job.engine, env, setup.own.home);
    const homes = jobHomes({ ...engine, copied: [...engine.copied, ...(folder.copied ?? [])] }, folder.root, owner);
    claim(folder.workspace, owner);
    claim(folder.skill, owner);
    const { command, readOnly, readWrite } = setup.engines[job.engine];
    const installed = installedProgram(command[0] ?? '', env['PATH'], folder.workspace, (one) => ownPlace(one, setup.own, false));
    const present = (paths: readonly string[], folders = false): string[] => paths.filter((path) => existsSync(path) && statSync(path).isDirectory() === folders);
    const host = { system: setup.system, installed, extra: { readOnly, readWrite }, user: setup.user, switchUser: setup.switched, tmpBytes, own: setup.own, bridge: setup.bridge };
    return planSandbox(host, {
      workspace: folder.workspace,
      skill: folder.skill,
      ...homes,
      shared: { readOnly: present(engine.settings), readWrite: present(engine.credentials), folders: present(engine.settings, true) },
      input: {
        readOnly: paths.filter((one) => one.access === 'read_only').map((one) => one.path),
        readWrite: paths.filter((one) => one.access === 'read_write').map((one) => one.path),
      },
      network,
    });
  }

  /** Why the paths a new job's input names may not be shown to it (INPUT_INVALID), or null. */
  checkInputPaths(paths: readonly InputPath[]): SkilldError | null {
    const { own, switched, user } = this.#setup;
    return refuseInputPaths(paths, own, switched && this.view.isolation === 'sandbox' ? user : null);
  }
}

/** The folders of a job's run folder its sandbox is built from. */
export interface JobFolder {
  root: string;
  workspace: string;
  /** The job's snapshot of its skill. */
  skill: string;
  /** More files of the engine's home folder copied into the job's own home as it is made (a test job's made databases). */
  copied?: readonly string[];
}
