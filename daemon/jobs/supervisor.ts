import type { SkillDefinition } from '../skills/manifest.js';
import { asStorageError } from '../store/storage-fault.js';
import type { CreateParams } from './create-request.js';
import type { SupervisorDeps } from './supervisor-deps.js';
import { Deadlines } from './deadlines.js';
import { Histories } from './histories.js';
import { autoDecideResponse, pendingKind } from '../model/interactions.js';
import type { Job, JobError, JobOwner } from '../model/job.js';
import { JobBases } from './job-bases.js';
import { JobCreation } from './job-creation.js';
import { JobTasks } from './job-tasks.js';
import { KeyedLock } from './keyed-lock.js';
import { forgetRecord } from '../process/keeper.js';
import { Launcher, storeSession, type StickyHooks } from './launcher.js';
import { replyPrompt } from '../model/prompt.js';
import type { JobQueries } from './queries.js';
import type { RunFolder } from '../model/run-folder.js';
import { SettleWaiters } from './settle-waiters.js';
import { isTerminal } from '../model/states.js';
import { decideReport, prepareTurn, startAttempt } from './turn-start.js';
import { leaveOrStop, Recoveries, recoverJobs } from './recovery.js';
import type { ReplyParams } from './reply-check.js';
import { Replies } from './replies.js';
import { APPROVAL_KIND, approvalPending, decisionOf } from './approvals.js';
import { rescueOf } from './sticky-rescue.js';
import type { StickySession } from './sticky-session.js';
import { LiveSessions } from './live-sessions.js';
import { JobMoves } from './moves.js';
import type { TurnHandle, TurnReport } from './turn.js';

/**
 * Runs jobs: queues them for slots, runs their turns, applies the gate, takes replies and
 * enforces deadlines. Every decision that moves a job lives here, under one per-job lock, so that
 * races (a reply against a deadline, a cancel against a turn's end) have exactly one place to be
 * decided; each move is made by `JobMoves.apply` (moves.ts), the only code that changes a job's
 * status: every change is persisted, logged, then announced.
 */
export class Supervisor {
  readonly #d: SupervisorDeps;
  readonly #lock = new KeyedLock();
  readonly #turns = new Map<string, TurnHandle>();
  readonly #sessions = new LiveSessions();
  readonly #bases: JobBases;
  readonly #histories: Histories;
  readonly #settleWaiters = new SettleWaiters();
  readonly #deadlines: Deadlines;
  readonly #queries: JobQueries;
  readonly #launcher: Launcher;
  readonly #tasks: JobTasks;
  readonly #creation: JobCreation;
  readonly #replies: Replies;
  readonly #moves: JobMoves;
  #closing = false;
  readonly #recoveries: Recoveries;

  constructor(deps: SupervisorDeps) {
    this.#d = deps;
    this.#queries = deps.queries;
    this.#launcher = new Launcher(deps);
    this.#creation = new JobCreation({ ...deps, runFolder: (jobId) => this.runFolder(jobId) });
    this.#histories = new Histories(deps.docs);
    this.#bases = new JobBases(deps.docs, (jobId) => this.runFolder(jobId));
    this.#tasks = new JobTasks(this.#lock, deps.clock, deps.logger, () => this.#closing);
    this.#recoveries = new Recoveries(this.#lock, (jobId, error) => this.#internalError(jobId, error));
    this.#deadlines = new Deadlines(deps.clock, (jobId) => this.#onDeadline(jobId));
    this.#moves = new JobMoves({ ...deps, sessions: this.#sessions, deadlines: this.#deadlines, bases: this.#bases, histories: this.#histories, settleWaiters: this.#settleWaiters });
    this.#replies = new Replies({
      ...deps,
      lock: this.#lock,
      histories: this.#histories,
      get: (jobId) => this.get(jobId),
      background: (jobId, task) => this.#background(jobId, task),
      moveOn: (job, response, kind) => this.#moveOnAfterReply(job, response, kind),
    });
  }

  get(jobId: string): Promise<Job> {
    return this.#queries.get(jobId);
  }

  /** A restart's recovery: when each job's is done, and what begins the take-up once the daemon answers. */
  get recoveries(): Pick<Recoveries, 'of' | 'begin'> {
    return this.#recoveries;
  }

  /** Resolves once nothing of the job runs (its lock is free): retention removes a finished job only then. */
  settled(jobId: string): Promise<void> {
    return this.#lock.run(jobId, async () => undefined);
  }

  runFolder(jobId: string): RunFolder {
    return this.#queries.folder(jobId);
  }

  /** `jobs/create`: the job, owned by `owner` (docs/access.md). */
  async create(params: CreateParams, owner?: JobOwner): Promise<Job> {
    const { job, plan } = await this.#creation.create(params, owner);
    // The validated definition and the request serve the job's turns; after a restart they are
    // read back from the job's documents.
    this.#bases.set(job.job_id, { skill: plan.skill, request: { input: plan.input, parameter: plan.parameter } });
    this.#d.logger.info({ job_id: job.job_id, skill_id: job.skill_id, engine: job.engine, mode: job.execution_mode }, 'job created');
    this.#d.events.emit(job.job_id, 'status_changed', { from: null, to: 'queued' });
    if (this.#d.sharedQueue === null) this.#schedule(job.job_id);
    else this.#d.sharedQueue.claimSoon();
    return job;
  }

  /** A job this daemon claimed from the shared queue: it waits for a slot here. */
  adopt(jobId: string): void {
    this.#schedule(jobId);
  }

  /** A job taken over from a host that is gone (cluster/member.ts): failed as that host's restart would, unless it finished meanwhile. */
  failTakenOver(jobId: string, error: JobError): void {
    this.#background(jobId, async () => {
      const job = await this.get(jobId);
      if (!isTerminal(job.status)) await this.#moves.apply(job, 'fail', { error });
    });
  }

  /** Stops the job wherever it is; resolves once it is terminal. */
  async cancel(jobId: string): Promise<{ job_id: string; status: string; accepted: boolean }> {
    const settled = this.#settleWaiters.next(jobId);
    const accepted = await this.#lock
      .run(jobId, async () => {
        const job = await this.get(jobId);
        if (isTerminal(job.status)) return false;
        const turn = this.#turns.get(jobId);
        // A turn waiting for an approval is canceled as a waiting job is: stored first.
        if (turn !== undefined && job.status === 'running') {
          turn.stop('canceled');
          return true;
        }
        // Stored first: a cancel that cannot be stored changes nothing. A live process is stopped after.
        const session = this.#sessions.get(jobId);
        await this.#moves.apply(job, 'cancel', { error: { code: 'CANCELED_BY_USER', message: 'canceled by user' } });
        await session?.stop();
        return true;
      })
      .catch((error: unknown) => {
        throw asStorageError(error, 'the cancel');
      });
    if (accepted) await settled;
    const job = await this.get(jobId);
    return { job_id: jobId, status: job.status, accepted };
  }

  /** Restart recovery (see recovery.ts): resolves once it is decided; `beginTakeUp` goes on with it once the daemon answers. */
  async recover(): Promise<void> {
    await recoverJobs({ ...this.#d, launcher: this.#launcher, folder: (jobId) => this.runFolder(jobId), recoveries: this.#recoveries }, {
      hold: (jobId) => this.#d.pool.occupy(jobId),
      hooks: (jobId) => this.#stickyHooks(jobId),
      tookUp: (job, turn, session) => this.#tookUp(job, turn, session),
      interrupted: (job, why) => this.#moves.apply(job, 'fail', { error: { code: 'DAEMON_RESTART_INTERRUPTED', message: `the daemon stopped while this turn was running, and its engine process could not be taken up: ${why}` } }),
      sendReply: (job, session) => this.#sendStoredReply(job, session),
      requeue: (job) => this.#moves.apply(job, 'requeue', { attempt: job.attempt - 1, started_at: job.attempt > 1 ? job.started_at : null }),
      queue: (jobId) => this.#schedule(jobId),
      waiting: (job, lost) => this.#recoverWaiting(job, lost),
    });
  }

  /** An engine process taken up keeps its job's slot; its turn's skill is read when it ends (a failure to read it fails the job there), not before the socket opens. */
  #tookUp(job: Job, turn: TurnHandle | null, session: StickySession | null): void {
    if (session !== null) this.#sessions.set(job.job_id, session);
    if (turn === null) return;
    this.#d.logger.info({ job_id: job.job_id, pid: turn.pid }, 'took up the engine process of a running turn');
    const skill = this.#bases.of(job).then((basis) => basis.skill);
    skill.catch(() => undefined);
    this.#watchTurn(job.job_id, job.attempt, turn, skill, false);
  }

  /** A resumable wait survives a restart (its deadline re-armed), and so does a live one taken up; a live one that was not lost its process (and may be rescued). */
  async #recoverWaiting(waiting: Job, lost: string | null): Promise<void> {
    const gone = waiting.interactive_profile?.kind === 'sticky_process' && !this.#sessions.has(waiting.job_id);
    const job = gone ? await this.#lostWhileWaiting(waiting, `is gone: the daemon restarted, and it could not be taken up: ${lost ?? 'no keeper was recorded'}`) : waiting;
    if (job.status !== 'waiting_user') return;
    // A reply stored before the daemon stopped, the job not moved on: it moves on now; else its deadline is armed again.
    if (!(await this.#replies.continueStored(job.job_id)) && job.wait_deadline_at !== null) this.#deadlines.set(job.job_id, new Date(job.wait_deadline_at));
  }

  /** The daemon stops: its engines are left to their keepers, or stopped (see recovery.ts). */
  async shutdown(stopEngines: boolean): Promise<void> {
    this.#closing = true;
    // A take-up under way (or not begun) ends first, so that what it took up is left or stopped as the rest.
    await this.#recoveries.finish();
    this.#deadlines.close();
    await leaveOrStop([...this.#turns.values()], this.#sessions.all(), stopEngines);
  }

  #schedule(jobId: string): void {
    this.#d.pool.request(jobId, () => this.#background(jobId, () => this.#beginTurn(jobId)));
  }

  /** Work the daemon does by itself for a job, retried through storage faults (see JobTasks); a bug fails the job. */
  #background(jobId: string, task: () => Promise<void>, onError: (error: unknown) => void = (error) => this.#internalError(jobId, error)): void {
    this.#tasks.run(jobId, task, onError);
  }

  async #beginTurn(jobId: string): Promise<void> {
    let job = await this.get(jobId);
    if (job.status !== 'queued' || this.#closing) {
      this.#d.pool.release(jobId);
      return;
    }
    const folder = this.runFolder(jobId);
    const prepared = await prepareTurn(job, folder, { ...this.#d, bases: this.#bases, histories: this.#histories });
    if ('code' in prepared) {
      await this.#moves.settle(job, { status: 'failed', error: prepared, warnings: [] }, job.session_handle);
      return;
    }
    const { skill, plan } = prepared;
    const attempt = job.attempt + 1;
    // The attempt's folder first: a job must never be running without the place its logs go.
    await startAttempt(folder, attempt, plan.prompt);
    // The keeper of an earlier turn is no record of this one: a restart before the process starts finds none.
    forgetRecord(folder.engineDir);
    // A job's isolation is decided as its first turn starts, by the host that runs it, for good.
    const isolation = job.attempt === 0 && job.isolation === null ? { isolation: this.#d.sandbox.view.isolation } : {};
    job = await this.#moves.apply(job, 'start', { attempt, started_at: job.started_at ?? this.#d.clock.now().toISOString(), ...isolation });
    // A shutdown that began during the awaits above must not be followed by a new process: the
    // job stays running and is settled as interrupted at the next start.
    if (this.#closing) return;
    const { turn, session, recorded } = this.#launcher.launch(job, attempt, plan, folder, this.#stickyHooks(jobId));
    if (session !== null) this.#sessions.set(jobId, session);
    // Registered before the first await, so that a shutdown in between still finds the turn.
    this.#watchTurn(jobId, attempt, turn, skill, plan.resuming);
    await recorded;
  }

  #watchTurn(jobId: string, attempt: number, turn: TurnHandle, skill: SkillDefinition | Promise<SkillDefinition>, resuming: boolean): void {
    this.#turns.set(jobId, turn);
    this.#d.logger.info({ job_id: jobId, attempt, pid: turn.pid, resuming }, 'turn started');
    void turn.done.then(
      (report) => this.#background(jobId, async () => this.#finishTurn(jobId, report, await skill)),
      (error: unknown) => this.#internalError(jobId, error),
    );
  }

  /** A sticky job's reply: written to the live process, which runs the next turn (PR-12). */
  async #continueSticky(job: Job, session: StickySession, response: unknown): Promise<Job> {
    const attempt = job.attempt + 1;
    const prompt = replyPrompt(response);
    await startAttempt(this.runFolder(job.job_id), attempt, prompt);
    const next = await this.#moves.apply(job, 'continue', { attempt, pending_interaction_id: null, wait_deadline_at: null });
    await this.#sendStickyTurn(next, session, prompt);
    return next;
  }

  async #sendStickyTurn(job: Job, session: StickySession, prompt: string): Promise<void> {
    const turn = this.#launcher.nextStickyTurn(job, job.attempt, session, prompt, this.runFolder(job.job_id));
    this.#watchTurn(job.job_id, job.attempt, turn, (await this.#bases.of(job)).skill, false);
  }

  /** After a restart: the reply stored last, never sent to the live process, is sent now (recovery.ts). */
  async #sendStoredReply(job: Job, session: StickySession): Promise<void> {
    const round = (await this.#histories.read(job.job_id)).filter((i) => i.replied_at != null).at(-1);
    if (round === undefined) throw new Error('a running live session with no reply stored for its turn');
    await this.#sendStickyTurn(job, session, replyPrompt(round.response));
  }

  /** What a live process reports: its session id (stored at once), a permission it asks (the job waits for a person, its turn in flight), its loss while the job waited. */
  #stickyHooks(jobId: string): StickyHooks {
    const background = (task: () => Promise<void>): void => this.#background(jobId, task);
    return {
      onSession: (id) => background(() => storeSession(this.#d.store, jobId, id)),
      onApproval: (request) =>
        background(async () => {
          const job = await this.get(jobId);
          // Not running: being stopped, and the turn ends without an answer.
          if (job.status === 'running') await this.#moves.enterWaiting(job, approvalPending(job.attempt, request), {});
        }),
      onLost: (exit) =>
        background(async () => {
          this.#sessions.forget(jobId);
          const job = await this.#d.store.getJob(jobId);
          if (job?.status === 'waiting_user') await this.#lostWhileWaiting(job, exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`);
        }),
    };
  }

  /** A waiting sticky job whose live process is gone: rescued by `sticky_recovery: "resume"` (see sticky-rescue.ts), else INTERACTION_PROCESS_LOST. */
  async #lostWhileWaiting(job: Job, how: string): Promise<Job> {
    this.#sessions.forget(job.job_id);
    const rescue = this.#d.config.engines[job.engine].sticky_recovery === 'resume' ? rescueOf(job, pendingKind(await this.#histories.read(job.job_id), job), how) : null;
    if (rescue !== null && 'patch' in rescue) {
      const next = await this.#moves.apply(job, 'rescue', rescue.patch);
      if (next.wait_deadline_at === null) this.#deadlines.clear(job.job_id);
      this.#d.events.emit(job.job_id, 'warning', { code: 'INTERACTION_PROCESS_RESCUED' });
      return next;
    }
    const why = rescue === null ? '' : `; it cannot be resumed: ${rescue.reason}`;
    await this.#moves.settle(job, { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST', message: `the live engine process ${how} while the job waited${why}` }, warnings: [] }, job.session_handle);
    return this.get(job.job_id);
  }

  async #finishTurn(jobId: string, report: TurnReport, skill: SkillDefinition): Promise<void> {
    this.#turns.delete(jobId);
    const job = await this.get(jobId);
    if (job.status === 'waiting_user' && !this.#closing) {
      // The turn ended while it waited for an approval: the process is gone.
      const reason = report.outcome.kind === 'failed' ? report.outcome.message : 'the turn ended';
      await this.#moves.settle(job, { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST', message: `the live engine process went away while the job waited for an approval: ${reason}` }, warnings: [] }, job.session_handle);
      return;
    }
    if (job.status !== 'running') return;
    if (report.outcome.kind === 'canceled' && this.#closing) return; // settled as interrupted at the next start
    const { decision, session_handle } = decideReport(job, report, skill);
    this.#d.logger.info({ job_id: jobId, attempt: job.attempt, exit: report.exit, decision: decision.status }, 'turn finished');
    // A job that ends with its live process ends once that is gone: finished means its slot is free.
    if (decision.status !== 'waiting_user') await this.#sessions.end(jobId);
    await this.#moves.settle(job, decision, session_handle, report.usage ?? null);
  }

  /** jobs/reply (see replies.ts). */
  reply(params: ReplyParams): Promise<{ job_id: string; status: string; accepted: true }> {
    return this.#replies.reply(params);
  }

  async #moveOnAfterReply(waiting: Job, response: unknown, kind: string | null): Promise<Job> {
    let job = waiting;
    const session = this.#sessions.get(job.job_id);
    if (job.interactive_profile?.kind === 'sticky_process') {
      if (kind === APPROVAL_KIND && session?.alive === true) {
        const next = await this.#moves.apply(job, 'continue', { pending_interaction_id: null, wait_deadline_at: null });
        session.answerApproval(decisionOf(response));
        return next;
      }
      if (session?.alive === true) return this.#continueSticky(job, session, response);
      job = await this.#lostWhileWaiting(job, 'is gone');
      if (job.status !== 'waiting_user') return job;
    }
    const next = await this.#moves.apply(job, 'resume', { pending_interaction_id: null, wait_deadline_at: null });
    this.#schedule(job.job_id);
    return next;
  }

  #onDeadline(jobId: string): void {
    this.#background(jobId, async () => {
      const job = await this.#d.store.getJob(jobId);
      if (job === undefined || job.status !== 'waiting_user' || job.wait_deadline_at === null) return;
      if (Date.parse(job.wait_deadline_at) > this.#d.clock.now().getTime()) {
        this.#deadlines.set(jobId, new Date(job.wait_deadline_at));
        return;
      }
      if (job.interactive_profile?.kind === 'sticky_process' && job.interactive_require_user_reply) {
        await this.#sessions.end(jobId);
        const message = `no reply within session_timeout_sec (${job.session_timeout_sec} s); the engine process was stopped`;
        await this.#moves.settle(job, { status: 'failed', error: { code: 'INTERACTION_WAIT_TIMEOUT', message }, warnings: [] }, job.session_handle);
        return;
      }
      const history = await this.#histories.read(jobId);
      await this.#replies.accept(job, history, autoDecideResponse(job.pending_interaction_id as number), 'auto_decide_timeout', null);
    });
  }

  /** A bug must not strand a job: log it, and fail the job if it is still active. */
  #internalError(jobId: string, error: unknown): void {
    this.#d.logger.error({ job_id: jobId, err: error }, 'internal error while running a job');
    const failJob = async (): Promise<void> => {
      const job = await this.#d.store.getJob(jobId);
      if (job === undefined || isTerminal(job.status)) return;
      this.#turns.get(jobId)?.stop('canceled');
      const message = `internal error: ${(error as Error).message ?? String(error)}`;
      await this.#moves.apply(job, 'fail', { error: { code: 'JOB_INTERNAL_ERROR', message } });
    };
    this.#background(jobId, failJob, (nested) => this.#d.logger.error({ job_id: jobId, err: nested }, 'could not fail job after internal error'));
  }
}
