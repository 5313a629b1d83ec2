import type { Clock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import type { JobEvents } from '../model/events.js';
import type { GateDecision, Pending } from '../model/gate.js';
import { boundError, type Job } from '../model/job.js';
import { isTerminal, nextStatus, type JobEvent } from '../model/states.js';
import { usageAfterTurn } from '../model/usage.js';
import type { SlotPool } from '../slots/pool.js';
import type { JobDocs } from '../store/job-docs.js';
import type { Store } from '../store/store.js';
import type { Deadlines } from './deadlines.js';
import type { TurnReport } from './turn.js';
import type { Histories } from './histories.js';
import type { JobBases } from './job-bases.js';
import type { LiveSessions } from './live-sessions.js';
import type { SettleWaiters } from './settle-waiters.js';

/** What moving a job touches besides its record. */
export interface MoveDeps {
  store: Store;
  docs: JobDocs;
  events: JobEvents;
  pool: SlotPool;
  clock: Clock;
  logger: Logger;
  sessions: LiveSessions;
  deadlines: Deadlines;
  bases: JobBases;
  histories: Histories;
  settleWaiters: SettleWaiters;
}

/**
 * The moves of a job along the lifecycle table (model/states.ts). `apply` is the only code that
 * changes a job's status: it checks the table, persists, logs, then announces. The supervisor
 * decides which move to make, under the job's lock; the two moves that carry documents store
 * them first (a finished job's result, a waiting job's question).
 */
export class JobMoves {
  readonly #d: MoveDeps;

  constructor(deps: MoveDeps) {
    this.#d = deps;
  }

  /** A turn's decision: the result stored, then the move; a question goes to `enterWaiting`. `usage`: what the turn's model calls used, counted into the job's. */
  async settle(job: Job, decision: GateDecision, session_handle: Job['session_handle'], usage: TurnReport['usage'] = null): Promise<void> {
    const warnings = [...new Set([...job.warnings, ...decision.warnings])];
    for (const code of decision.warnings) this.#d.events.emit(job.job_id, 'warning', { code });
    const used = usage === null || usage === undefined ? {} : { usage: usageAfterTurn(job.usage, usage.used, usage.span) };
    if (decision.status === 'waiting_user') {
      await this.enterWaiting(job, decision.pending, { warnings, session_handle, ...used });
      return;
    }
    const output = decision.status === 'succeeded' ? decision.output : null;
    const error = decision.status === 'succeeded' ? null : boundError(decision.error);
    await this.#d.docs.putResult({ job_id: job.job_id, status: decision.status, output, warnings, error });
    const event: JobEvent = decision.status === 'succeeded' ? 'succeed' : decision.status === 'canceled' ? 'cancel' : 'fail';
    await this.apply(job, event, { warnings, error, session_handle, ...used });
  }

  /** The job asks the user: the round and the pending question stored, then the move, its deadline armed, and clients told. */
  async enterWaiting(job: Job, asked: Pending, patch: Partial<Job>): Promise<void> {
    const now = this.#d.clock.now();
    const pending = await this.#d.histories.ask(job.job_id, asked, now.toISOString());
    await this.#d.docs.putPending(job.job_id, pending);
    const sticky = job.interactive_profile?.kind === 'sticky_process';
    const deadline = sticky || !job.interactive_require_user_reply ? new Date(now.getTime() + job.session_timeout_sec * 1000) : null;
    await this.apply(job, 'wait', { ...patch, pending_interaction_id: pending.interaction_id, wait_deadline_at: deadline?.toISOString() ?? null });
    if (deadline !== null) this.#d.deadlines.set(job.job_id, deadline);
    this.#d.events.emit(job.job_id, 'input_required', { pending });
  }

  /** The only writer of job status: checks the table, persists, logs, then announces. */
  async apply(job: Job, event: JobEvent, patch: Partial<Job>): Promise<Job> {
    const to = nextStatus(job.status, event);
    if (to === null) throw new Error(`illegal move: ${job.status} --${event}-->`);
    if (to === 'failed' && (patch.error ?? null) === null) throw new Error('entering failed needs an error code');
    const now = this.#d.clock.now().toISOString();
    const merged: Job = { ...job, ...patch };
    const next: Job = { ...merged, error: merged.error === null ? null : boundError(merged.error), status: to, updated_at: now, finished_at: isTerminal(to) ? now : null };
    await this.#d.store.putJob(next);
    this.#d.logger.info({ job_id: job.job_id, from: job.status, to, event }, 'job status');
    // A move that keeps the status (a rescue) changes no status: clients see its warning event.
    if (to !== job.status) this.#d.events.emit(job.job_id, 'status_changed', { from: job.status, to });
    // A live process that outlasts its job keeps the slot until it is gone: the slot is a process's.
    const stopping = isTerminal(to) ? this.#d.sessions.end(job.job_id) : null;
    if (stopping !== null) {
      const release = (): void => this.#d.pool.release(job.job_id);
      stopping.then(release, (error: unknown) => {
        this.#d.logger.error({ job_id: job.job_id, err: error }, 'could not stop the live process of a finished job');
        release();
      });
    } else if (isTerminal(to) || (to === 'waiting_user' && next.interactive_profile?.kind !== 'sticky_process')) this.#d.pool.release(job.job_id);
    if (isTerminal(to)) this.#d.pool.withdraw(job.job_id);
    if (job.status === 'waiting_user' && to !== 'waiting_user') this.#d.deadlines.clear(job.job_id);
    if (isTerminal(to)) {
      this.#d.events.emit(job.job_id, 'finished', { status: to, error: next.error });
      this.#d.bases.forget(job.job_id);
      this.#d.histories.forget(job.job_id);
      void this.#d.events.close(job.job_id);
    }
    if (isTerminal(to) || to === 'waiting_user') this.#d.settleWaiters.settled(job.job_id);
    return next;
  }
}
