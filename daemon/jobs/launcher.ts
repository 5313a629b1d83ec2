import { randomUUID } from 'node:crypto';
import { basename, join } from 'node:path';
import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import { effectiveLimits } from '../base/config-sandbox.js';
import { AgentMessages } from '../engines/agent-text.js';
import { withoutAskUserBlock } from '../engines/ask-user.js';
import type { TurnParser } from '../engines/engine.js';
import type { ApprovalRequest, LiveStart } from '../engines/live-session.js';
import { readRecord } from '../process/keeper.js';
import { ENGINES } from '../engines/registry.js';
import type { Logger } from '../base/logger.js';
import type { JobSandbox } from '../sandbox/job-sandbox.js';
import { readStat } from '../process/proc.js';
import type { ExitInfo, Spawner } from '../process/spawn.js';
import type { Store } from '../store/store.js';
import type { EngineName, Job } from '../model/job.js';
import type { RunFolder } from '../model/run-folder.js';
import { isTerminal } from '../model/states.js';
import { StickySession, type AdoptedSession } from './sticky-session.js';
import type { TurnPlan } from './turn-plan.js';
import { adoptTurn, startTurn, type TurnHandle } from './turn.js';
import { guardWorkspace } from './workspace-guard.js';
import type { JobEvents } from '../model/events.js';
import { engineAllowEntries } from '../network/engine-hosts.js';
import { isScriptable, writeScriptedHome } from '../engines/scripted-homes.js';
import { copySeeds, type ScriptedSeeds } from '../engines/scripted-seeds.js';
import type { JobNetworks } from '../network/job-networks.js';
import type { JobNetwork } from '../sandbox/plan.js';
import { accountTurn } from './provider-guard.js';

export interface LauncherDeps {
  spawner: Spawner;
  clock: Clock;
  store: Store;
  events: JobEvents;
  logger: Logger;
  config: Pick<Config, 'engines' | 'kill_grace_ms' | 'limits' | 'network'>;
  /** The engine's environment; `live` adds what its live protocol needs; `own` replaces the configured variables. */
  engineEnv(name: EngineName, live?: boolean, own?: Readonly<Record<string, string>>): Record<string, string>;
  /** The sandbox of a job's engine processes. */
  sandbox: Pick<JobSandbox, 'planFor' | 'ownNetwork'>;
  /** Each running job's own network (docs/network.md). */
  networks: Pick<JobNetworks, 'open' | 'reopen' | 'close' | 'gateway'>;
  /** The disk space a folder takes (a job's workspace, held to `limits.workspace`). */
  diskUsage(dir: string): Promise<number>;
  /** What a test job's engine finds made in its new home (engines/scripted-seeds.ts). */
  scriptedSeeds: Pick<ScriptedSeeds, 'files'>;
}

/** What a sticky job's live process reports while it lives. */
export interface StickyHooks {
  /** The process went away while the job waited. */
  onLost(exit: ExitInfo): void;
  /** The engine named its session. */
  onSession(sessionId: string): void;
  /** The engine asks a person's permission (approvals `ask`). */
  onApproval(request: ApprovalRequest): void;
}

/**
 * Starts engine processes for turns: a per-turn process, or a sticky session that lives across
 * turns. Every process is recorded in the store while it runs, for restart recovery.
 */
export class Launcher {
  readonly #d: LauncherDeps;
  /** The workspace limit of each job whose live session this daemon started, for its later turns. */
  readonly #workspaceLimits = new Map<string, number | null>();

  constructor(deps: LauncherDeps) {
    this.#d = deps;
  }

  /**
   * The first process of a turn; a sticky job gets a session that also serves its later turns.
   * The process is spawned before this returns (nothing is awaited first); `recorded` settles
   * once the process is in the store.
   */
  launch(job: Job, attempt: number, plan: TurnPlan, folder: RunFolder, hooks: StickyHooks): { turn: TurnHandle; session: StickySession | null; recorded: Promise<void> } {
    const live = job.interactive_profile?.kind === 'sticky_process';
    const scripted = scriptedHome(job, folder, this.#d.scriptedSeeds);
    const env = this.#d.engineEnv(job.engine, live, scripted?.env);
    const limits = effectiveLimits(this.#d.config.limits, plan.limits);
    const network = this.#openNetwork(job, env, plan);
    const command = this.#d.config.engines[job.engine].command;
    const calls = this.#viaGateway(job.job_id, env, command);
    const spec = {
      ...this.#output(job),
      argv: calls(plan.argv),
      cwd: folder.workspace,
      env,
      mark: job.job_id,
      sandbox: this.#d.sandbox.planFor(job, { root: folder.root, workspace: folder.workspace, skill: folder.skillDir, copied: scripted?.copied ?? [] }, env, plan.paths, limits.tmp, network),
      limits: { processes: limits.processes, memory: limits.memory },
      keeperDir: folder.engineDir,
      logs: logsOf(folder, attempt),
    };
    const hardTimeoutMs = job.hard_timeout_sec * 1000;
    if (live) {
      const protocol = ENGINES[job.engine].live;
      const start = { engine: job.engine, model: job.model, cwd: folder.workspace, approvals: job.approvals ?? 'auto', newSessionId: randomUUID() };
      const argv = calls([...command, ...protocol.argv(start)]);
      // A live protocol reports each message whole (ACP chunks joined): one `message` event each.
      const session = StickySession.start(this.#d.spawner, this.#d.clock, { ...spec, argv, protocol, start, graceMs: this.#d.config.kill_grace_ms, onMessage: spec.say, ...hooks });
      this.#workspaceLimits.set(job.job_id, limits.workspace);
      void session.exited.then(() => {
        this.#workspaceLimits.delete(job.job_id);
        if (network !== null) this.#closeNetwork(job.job_id);
      });
      const turn = this.#guard(session.turn(plan.prompt, hardTimeoutMs, null, attempt), folder, limits.workspace, job.job_id);
      return { turn, session, recorded: this.#record(job.job_id, session.pid, session.exited) };
    }
    const expectedSession = plan.resuming ? (job.session_handle?.handle_value ?? null) : null;
    const messages = this.#messages(job, spec);
    const started = startTurn(this.#d.spawner, this.#d.clock, { ...spec, ...messages.spec, hardTimeoutMs, resuming: plan.resuming, expectedSession, stdin: plan.stdin });
    const turn = this.#guard(messages.ended(started), folder, limits.workspace, job.job_id);
    if (network !== null) void turn.done.finally(() => this.#closeNetwork(job.job_id)).catch(() => undefined);
    return { turn, session: null, recorded: this.#record(job.job_id, turn.pid, turn.done) };
  }

  /**
   * A job's own network for its next process (docs/network.md), where it gets one: where its
   * engine, the config and, if the config lets it, its skill allow it to connect. One that cannot
   * be opened is said in its events: its engine then has no way out at all.
   */
  #openNetwork(job: Job, env: Readonly<Record<string, string>>, plan: TurnPlan): JobNetwork | null {
    if (job.isolation !== 'sandbox' || !this.#d.sandbox.ownNetwork) return null;
    const { network, engines } = this.#d.config;
    const entries = [...engineAllowEntries(job.engine, env, engines[job.engine].command), ...network.allow, ...engines[job.engine].network.allow, ...(network.skills_may_allow ? plan.allow : [])];
    try {
      // A test job's model is its scripted one, never the provider behind a gateway.
      return this.#d.networks.open(job.job_id, entries, job.scripted_model === undefined ? job.engine : undefined);
    } catch (error) {
      // Never the host's network in its place: a network of its own with no way out at all.
      this.#d.logger.error({ job_id: job.job_id, err: error }, "could not open the job's network");
      this.#d.events.emit(job.job_id, 'warning', { code: 'NETWORK_UNAVAILABLE', message: `the job's network could not be opened, so its engine has no way out: ${(error as Error).message}` });
      return { folder: '', listeners: [], env: {} };
    }
  }

  /**
   * Where a job's engine calls its model through the gateway: the variables that would carry
   * another credential dropped from `env`, and a command line with the gateway's arguments after
   * the engine's command (Codex's provider). Elsewhere the command line as it is.
   */
  #viaGateway(jobId: string, env: Record<string, string>, command: readonly string[]): (argv: string[]) => string[] {
    const setup = this.#d.networks.gateway(jobId)?.setup ?? null;
    if (setup === null) return (argv) => argv;
    for (const name of setup.unset) delete env[name];
    return (argv) => [...argv.slice(0, command.length), ...setup.args, ...argv.slice(command.length)];
  }

  /** Opens again the network an earlier daemon opened for a job's process it takes up; whether there was one. */
  #reopenNetwork(jobId: string): boolean {
    try {
      return this.#d.networks.reopen(jobId);
    } catch (error) {
      this.#d.logger.error({ job_id: jobId, err: error }, "could not open the job's network again: its engine has no way out");
      return false;
    }
  }

  #closeNetwork(jobId: string): void {
    this.#d.networks.close(jobId).catch((error: unknown) => this.#d.logger.warn({ job_id: jobId, err: error }, "could not close the job's network"));
  }

  /**
   * Takes up the turn of a running one-shot job whose engine process an earlier daemon started
   * (docs/restarts.md); resolves with why not when it cannot be.
   */
  async adoptTurn(job: Job, folder: RunFolder, skip: Record<'stdout' | 'stderr', number>): Promise<TurnHandle | { problem: string }> {
    const spec = {
      ...this.#output(job),
      argv: this.#d.config.engines[job.engine].command,
      cwd: folder.workspace,
      env: {},
      mark: job.job_id,
      sandbox: null,
      limits: null,
      keeperDir: folder.engineDir,
      logs: logsOf(folder, job.attempt),
    };
    const messages = this.#messages(job, spec);
    const network = this.#reopenNetwork(job.job_id);
    const adopted = await adoptTurn(this.#d.spawner, this.#d.clock, { ...spec, ...messages.spec, hardTimeoutMs: job.hard_timeout_sec * 1000 }, skip);
    if ('problem' in adopted) {
      if (network) this.#closeNetwork(job.job_id);
      return adopted;
    }
    if (network) void adopted.turn.done.finally(() => this.#closeNetwork(job.job_id)).catch(() => undefined);
    // Taken up after a restart: held to the daemon's workspace limit (a skill's lower one is not at hand).
    const turn = this.#guard(messages.ended(adopted.turn), folder, this.#d.config.limits.workspace, job.job_id);
    void turn.done.then(() => this.#d.store.removeProcess(adopted.keeperPid)).catch(() => undefined);
    return turn;
  }

  /**
   * Takes up the live session of a sticky job whose process an earlier daemon started, waiting
   * or in a turn (docs/restarts.md, "Live sessions"); resolves with why not when it cannot be.
   */
  async adoptSession(job: Job, folder: RunFolder, told: Record<'stdout' | 'stderr', number>, hooks: StickyHooks): Promise<AdoptedSession | { problem: string }> {
    const record = readRecord(folder.engineDir);
    if ('problem' in record) return record;
    const note = record.note as { kind?: unknown; start?: LiveStart } | null;
    if (note?.kind !== 'live' || note.start === undefined) return { problem: 'its keeper holds no live session' };
    const protocol = ENGINES[job.engine].live;
    const out = this.#output(job);
    const argv = [...this.#d.config.engines[job.engine].command, ...protocol.argv(note.start)];
    const spec = { ...out, argv, cwd: folder.workspace, env: {}, mark: job.job_id, sandbox: null, limits: null, keeperDir: folder.engineDir, logs: logsOf(folder, job.attempt), protocol, start: note.start, graceMs: this.#d.config.kill_grace_ms, onMessage: out.say, ...hooks };
    const network = this.#reopenNetwork(job.job_id);
    const adopted = await StickySession.adopt(this.#d.spawner, this.#d.clock, spec, told);
    if ('session' in adopted) {
      void adopted.session.exited.then(() => this.#d.store.removeProcess(record.pid)).catch(() => undefined);
      if (network) void adopted.session.exited.finally(() => this.#closeNetwork(job.job_id)).catch(() => undefined);
    } else if (network) this.#closeNetwork(job.job_id);
    return adopted;
  }

  /** Where a job's engine output goes: each line an `output` event; `say` makes an agent's message a `message` event. */
  #output(job: Job): JobOutput {
    return {
      onOutput: (stream, text) => this.#d.events.emit(job.job_id, 'output', { stream, text }),
      // The agent's words without a question's hint block: the question itself comes as `input_required`.
      say: (message) => {
        const text = withoutAskUserBlock(message);
        if (text !== '') this.#d.events.emit(job.job_id, 'message', { text });
      },
    };
  }

  /** A one-shot turn's messages, read from its stdout lines, each as it is printed; the last is told before the turn's end. */
  #messages(job: Job, out: JobOutput): { spec: { onOutput: JobOutput['onOutput']; parser: TurnParser }; ended(turn: TurnHandle): TurnHandle } {
    const adapter = ENGINES[job.engine];
    const messages = new AgentMessages(adapter.agentText, out.say);
    const onOutput = (stream: 'stdout' | 'stderr', text: string): void => {
      out.onOutput(stream, text);
      if (stream === 'stdout') messages.line(text);
    };
    const ended = (turn: TurnHandle): TurnHandle => {
      const done = turn.done.then((report) => {
        messages.end(); // before anyone hears that the turn ended
        return report;
      });
      return { ...turn, done };
    };
    return { spec: { onOutput, parser: adapter.newParser() }, ended };
  }

  /** A sticky job's next turn: the reply is the live process's next prompt (PR-12). */
  nextStickyTurn(job: Job, attempt: number, session: StickySession, prompt: string, folder: RunFolder): TurnHandle {
    const limit = this.#workspaceLimits.get(job.job_id) ?? this.#d.config.limits.workspace;
    return this.#guard(session.turn(prompt, job.hard_timeout_sec * 1000, logsOf(folder, attempt), attempt), folder, limit, job.job_id);
  }

  /** A job's turn, its workspace held to `limit` (workspace-guard.ts), its usage counted and its provider watched (provider-guard.ts). */
  #guard(turn: TurnHandle, folder: RunFolder, limit: number | null, jobId: string): TurnHandle {
    return accountTurn(guardWorkspace(turn, this.#d.clock, { limit, measure: () => this.#d.diskUsage(folder.workspace) }), this.#d.networks.gateway(jobId));
  }

  /**
   * A record that cannot be written (a full disk) does not stop the turn: after a crash the
   * process is still found by its job mark. It is logged, and its removal skipped.
   */
  async #record(jobId: string, pid: number | null, gone: Promise<unknown>): Promise<void> {
    const stat = pid === null ? null : readStat(pid);
    if (pid === null || stat === null) return;
    const recorded = this.#d.store.putProcess({ job_id: jobId, pid, pgid: pid, start_time: stat.startTime }).then(
      () => true,
      (error: unknown) => {
        this.#d.logger.warn({ job_id: jobId, pid, err: error }, 'could not record the engine process');
        return false;
      },
    );
    void Promise.all([recorded, gone.catch(() => undefined)]).then(async ([stored]) => {
      if (stored) await this.#d.store.removeProcess(pid).catch((error: unknown) => this.#d.logger.warn({ job_id: jobId, pid, err: error }, 'could not remove the engine process record'));
    });
    await recorded;
  }
}

/** Where a job's engine output goes. */
interface JobOutput {
  onOutput(stream: 'stdout' | 'stderr', text: string): void;
  say(message: string): void;
}

function logsOf(folder: RunFolder, attempt: number): Record<'stdout' | 'stderr', string> {
  return { stdout: folder.logFile(attempt, 'stdout'), stderr: folder.logFile(attempt, 'stderr') };
}

/** A live engine named its session: stored at once, so that it is known even if the turn never ends. Not a move: the status stays. */
export async function storeSession(store: Store, jobId: string, sessionId: string): Promise<void> {
  const job = await store.getJob(jobId);
  if (job === undefined || isTerminal(job.status) || job.session_handle?.handle_value === sessionId) return;
  await store.putJob({ ...job, session_handle: { engine: job.engine, handle_type: 'session_id', handle_value: sessionId } });
}

/**
 * A test job's home pointed at its scripted model (written before each process): the variables
 * that replace the configured ones, and the made databases in it, which a sandbox copies into the
 * job's own home as it makes it; undefined for any other job.
 */
function scriptedHome(job: Job, folder: RunFolder, seeds: Pick<ScriptedSeeds, 'files'>): { env: Record<string, string>; copied: string[] } | undefined {
  if (job.scripted_model === undefined || !isScriptable(job.engine)) return undefined;
  const env = writeScriptedHome(job.engine, job.scripted_model, folder.modelHome);
  // Where it has none yet (~0.5 MB, synchronous as the rest).
  const files = seeds.files(job.engine);
  copySeeds(files, folder.modelHome);
  return { env, copied: files.map((file) => join(folder.modelHome, basename(file))) };
}
