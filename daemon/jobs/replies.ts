import type { Clock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import { asStorageError, isStorageFault } from '../store/storage-fault.js';
import type { Histories } from './histories.js';
import { pendingKind, withReply, type Interaction, type ResolutionMode } from '../model/interactions.js';
import type { Job } from '../model/job.js';
import type { KeyedLock } from './keyed-lock.js';
import { checkReplyRequest, type ReplyParams } from './reply-check.js';
import { isTerminal } from '../model/states.js';

export interface RepliesDeps {
  clock: Clock;
  logger: Logger;
  lock: KeyedLock;
  histories: Histories;
  get(jobId: string): Promise<Job>;
  /** Work the supervisor does by itself for a job, retried through storage faults. */
  background(jobId: string, task: () => Promise<void>): void;
  /** The supervisor's move of a waiting job on with its reply (the one writer of job status decides). */
  moveOn(job: Job, response: unknown, kind: string | null): Promise<Job>;
}

/** Replies to waiting jobs: checked, stored, acknowledged, and the job moved on. */
export class Replies {
  readonly #d: RepliesDeps;

  constructor(deps: RepliesDeps) {
    this.#d = deps;
  }

  /** jobs/reply: checked, persisted, then acknowledged; a retry with the same key is harmless. */
  reply(params: ReplyParams): Promise<{ job_id: string; status: string; accepted: true }> {
    return this.#d.lock.run(params.job_id, () => this.#reply(params)).catch((error: unknown) => {
      throw asStorageError(error, 'the reply');
    });
  }

  async #reply(params: ReplyParams): Promise<{ job_id: string; status: string; accepted: true }> {
    const job = await this.#d.get(params.job_id);
    // A finished job's history is read without being kept: nothing will forget it.
    const history = job.execution_mode === 'interactive' ? await this.#d.histories.read(job.job_id, !isTerminal(job.status)) : [];
    if (checkReplyRequest(job, history, params) === 'repeat') return { job_id: job.job_id, status: job.status, accepted: true };
    const next = await this.accept(job, history, params.response, 'user_reply', params.idempotency_key ?? null);
    return { job_id: job.job_id, status: next.status, accepted: true };
  }

  /**
   * Records the reply durably, then moves the job on: a resumable job queues for a slot (LC-4).
   * Once the reply is stored it is acknowledged; if moving on fails because the storage does,
   * the daemon moves the job on by itself once it can. Called under the job's lock.
   */
  async accept(job: Job, history: readonly Interaction[], response: unknown, mode: ResolutionMode, key: string | null): Promise<Job> {
    const interactionId = job.pending_interaction_id as number;
    const at = this.#d.clock.now().toISOString();
    await this.#d.histories.write(job.job_id, withReply(history, interactionId, { response, mode, at, key }));
    this.#d.logger.info({ job_id: job.job_id, interaction_id: interactionId, resolution_mode: mode }, 'reply accepted');
    try {
      return await this.#d.moveOn(job, response, pendingKind(history, job));
    } catch (error) {
      if (!isStorageFault(error)) throw error;
      this.#d.background(job.job_id, async () => void (await this.continueStored(job.job_id)));
      return job;
    }
  }

  /** A waiting job whose pending round has a stored reply moves on with it (after a restart, or a storage fault); true when it did. */
  async continueStored(jobId: string): Promise<boolean> {
    const job = await this.#d.get(jobId);
    if (job.status !== 'waiting_user') return false;
    const round = (await this.#d.histories.read(jobId)).find((i) => i.interaction_id === job.pending_interaction_id);
    if (round?.replied_at == null) return false;
    await this.#d.moveOn(job, round.response, round.kind);
    return true;
  }
}
