import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Timer } from '../base/clock.js';
import type { RetentionConfig } from '../base/config.js';
import type { Logger } from '../base/logger.js';
import { crashPoint } from '../store/crash-points.js';
import type { ExpiryQuery, Store } from '../store/store.js';
import type { JobStatus } from '../model/states.js';
import type { Job } from '../model/job.js';

/** What `jobs/prune` removes: jobs finished longer ago than `older_than_ms` (0: all), of `statuses`. */
export interface PruneSelection {
  older_than_ms?: number | undefined;
  statuses?: JobStatus[] | undefined;
}

/** The answer of `jobs/prune` (docs/retention.md). */
export interface PruneAnswer {
  dry_run: boolean;
  /** The jobs removed, or that would be. */
  count: number;
  /** Their ids, the earliest finished first, up to `LISTED`. */
  job_ids: string[];
  truncated: boolean;
  /** What selected them: the given selection, else the configured policy. */
  selection: { finished_before: string | null; keep_newest: number | null; statuses: JobStatus[] | null };
}

export interface RetentionDeps {
  store: Store;
  runsDir: string;
  policy: RetentionConfig;
  clock: Clock;
  logger: Logger;
  /** Resolves once nothing of the job runs any more (its lock is free). */
  settled(jobId: string): Promise<void>;
  /** Stores the job's last events and forgets its event log. */
  closeEvents(jobId: string): Promise<void>;
  /**
   * How long a run folder no job names is left before the sweep removes it: `ORPHAN_GRACE_MS`
   * where a new job's folder is written before the job (the files store), 0 where the job is
   * stored first (a shared store: the folder is made when the job's first turn begins).
   */
  orphanGraceMs: number;
}

/** The policy and the last background round, as `daemon/status` shows them. */
export interface RetentionView {
  max_age_sec: number | null;
  max_jobs: number | null;
  interval_sec: number;
  /** The last background round: when it ended, how many jobs it removed, and why it failed (else null). */
  last_round: { at: string; removed: number; error: string | null } | null;
}

/** Jobs are removed this many at a time, with the event loop free in between. */
const BATCH = 500;
/** The most ids an answer lists. */
const LISTED = 1000;
/** The first round after a start; later rounds come every `interval`. */
const FIRST_ROUND_MS = 60_000;
/** A run folder no job names is left this long: `jobs/create` writes the folder before the job. */
export const ORPHAN_GRACE_MS = 10 * 60_000;
/** Where a run folder goes while it is removed, so that no reader sees half of it under its name. */
const REMOVING = '.removing-';

/**
 * Removes finished jobs: by the configured policy in the background (every `interval`), or as
 * `jobs/prune` asks. A job goes from the store first, then its run folder on this host; hosts
 * sharing a store each remove the run folders they hold whose job is gone (`sweep`), which also
 * clears what a crash between the two steps left. Active jobs are never removed.
 */
export class Retention {
  readonly #d: RetentionDeps;
  #timer: Timer | null = null;
  #stopped = false;
  /** Rounds and prunes run one at a time. */
  #tail: Promise<unknown> = Promise.resolve();
  #lastRound: RetentionView['last_round'] = null;

  constructor(deps: RetentionDeps) {
    this.#d = deps;
  }

  start(): void {
    this.#arm(Math.min(this.#d.policy.interval_ms, FIRST_ROUND_MS));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.idle();
  }

  /** Resolves once the round or prune under way (and any queued behind it) is over. */
  async idle(): Promise<void> {
    await this.#tail.catch(() => undefined);
  }

  view(): RetentionView {
    const { max_age_ms, max_jobs, interval_ms } = this.#d.policy;
    return { max_age_sec: max_age_ms === null ? null : Math.round(max_age_ms / 1000), max_jobs, interval_sec: Math.round(interval_ms / 1000), last_round: this.#lastRound };
  }

  #arm(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = this.#d.clock.setTimer(delayMs, () => {
      const ended = (removed: number, error: string | null): void => {
        this.#lastRound = { at: this.#d.clock.now().toISOString(), removed, error };
      };
      void this.#serial(() => this.round()).then(
        (answer) => {
          ended(answer.count, null);
          if (answer.count > 0) this.#d.logger.info({ removed: answer.count, selection: answer.selection }, 'retention removed finished jobs');
        },
        (error: unknown) => {
          ended(0, error instanceof Error ? error.message : String(error));
          this.#d.logger.warn({ err: error }, 'retention round failed; the next one tries again');
        },
      ).finally(() => this.#arm(this.#d.policy.interval_ms));
    });
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(task, task);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** One background round: the policy, then the run folders of jobs gone. */
  async round(): Promise<PruneAnswer> {
    const answer = await this.#remove(this.#policyQuery(), false);
    await this.#sweep();
    return answer;
  }

  /**
   * `jobs/prune`: the selection given, or the policy when none is; with `only`, just the jobs of
   * that selection it keeps (those the caller may act on, docs/access.md).
   */
  prune(selection: PruneSelection, dryRun: boolean, only?: (job: Job) => boolean): Promise<PruneAnswer> {
    const query = selection.older_than_ms === undefined && selection.statuses === undefined
      ? this.#policyQuery()
      : { finished_before: new Date(this.#d.clock.now().getTime() - (selection.older_than_ms ?? 0)).toISOString(), ...(selection.statuses === undefined ? {} : { statuses: selection.statuses }) };
    return this.#serial(() => this.#remove(query, dryRun, only));
  }

  /** `jobs/remove`: these finished jobs, now, in turn with the rounds and prunes; resolves with those removed (a job not finished is left). */
  remove(jobIds: readonly string[]): Promise<string[]> {
    return this.#serial(() => this.#removeBatch([...jobIds]));
  }

  #policyQuery(): Omit<ExpiryQuery, 'limit'> {
    const { max_age_ms, max_jobs } = this.#d.policy;
    return {
      ...(max_age_ms === null ? {} : { finished_before: new Date(this.#d.clock.now().getTime() - max_age_ms).toISOString() }),
      ...(max_jobs === null ? {} : { keep_newest: max_jobs }),
    };
  }

  async #remove(query: Omit<ExpiryQuery, 'limit'>, dryRun: boolean, only?: (job: Job) => boolean): Promise<PruneAnswer> {
    const selection = { finished_before: query.finished_before ?? null, keep_newest: query.keep_newest ?? null, statuses: query.statuses === undefined ? null : [...query.statuses] };
    const answer: PruneAnswer = { dry_run: dryRun, count: 0, job_ids: [], truncated: false, selection };
    const note = (ids: readonly string[]): void => {
      answer.count += ids.length;
      answer.job_ids.push(...ids.slice(0, LISTED - answer.job_ids.length));
      answer.truncated = answer.count > answer.job_ids.length;
    };
    if (query.finished_before === undefined && query.keep_newest === undefined) return answer;
    if (only !== undefined) {
      // The selection whole, then the caller's part of it: a batch of others' jobs must not end the prune.
      const mine: string[] = [];
      for (const { job_id } of await this.#d.store.expiredJobs({ ...query, limit: Number.MAX_SAFE_INTEGER })) {
        const job = await this.#d.store.getJob(job_id);
        if (job !== undefined && only(job)) mine.push(job_id);
      }
      if (dryRun) note(mine);
      else for (let i = 0; i < mine.length; i += BATCH) note(await this.#removeBatch(mine.slice(i, i + BATCH)));
      return answer;
    }
    if (dryRun) {
      note((await this.#d.store.expiredJobs({ ...query, limit: Number.MAX_SAFE_INTEGER })).map((job) => job.job_id));
      return answer;
    }
    for (;;) {
      const batch = (await this.#d.store.expiredJobs({ ...query, limit: BATCH })).map((job) => job.job_id);
      if (batch.length === 0) return answer;
      const removed = await this.#removeBatch(batch);
      note(removed);
      // A batch the store would not remove (another host removed it meanwhile) ends the round.
      if (removed.length === 0 || batch.length < BATCH) return answer;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Removes finished jobs: nothing of them runs any more and their last events are stored before their rows go, then their folders. */
  async #removeBatch(batch: string[]): Promise<string[]> {
    await Promise.all(batch.map((id) => this.#d.settled(id)));
    await Promise.all(batch.map((id) => this.#d.closeEvents(id)));
    // In the order asked for: a store answers in its own (PostgreSQL's DELETE … RETURNING in none).
    const gone = new Set(await this.#d.store.removeJobs(batch));
    const removed = batch.filter((id) => gone.has(id));
    // One folder at a time: the I/O threads stay free for the requests being served meanwhile.
    for (const id of removed) await this.#removeFolder(id);
    return removed;
  }

  /** The run folders on this host whose job is gone (removed by another host, or a crash before its folder went). */
  async #sweep(): Promise<void> {
    const names = await readdir(this.#d.runsDir);
    await Promise.all(names.filter((name) => name.startsWith(REMOVING)).map((name) => rm(join(this.#d.runsDir, name), { recursive: true, force: true })));
    const ids = names.filter((name) => !name.startsWith('.'));
    const oldest = this.#d.clock.now().getTime() - this.#d.orphanGraceMs;
    for (let i = 0; i < ids.length; i += BATCH) {
      const batch = ids.slice(i, i + BATCH);
      const existing = await this.#d.store.existingJobs(batch);
      for (const id of batch) {
        if (existing.has(id)) continue;
        const made = await stat(join(this.#d.runsDir, id)).catch(() => null);
        if (made !== null && made.mtimeMs <= oldest) await this.#removeFolder(id);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async #removeFolder(jobId: string): Promise<void> {
    const aside = join(this.#d.runsDir, `${REMOVING}${jobId}`);
    crashPoint({ step: 'remove_folder', path: join(this.#d.runsDir, jobId) });
    try {
      await rename(join(this.#d.runsDir, jobId), aside);
    } catch (error) {
      // Not on this host: the job never ran here.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    await rm(aside, { recursive: true, force: true });
  }
}
