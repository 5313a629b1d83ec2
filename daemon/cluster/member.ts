import type { Clock, Timer } from '../base/clock.js';
import type { JobError } from '../model/job.js';
import type { Logger } from '../base/logger.js';
import type { SlotPool } from '../slots/pool.js';
import type { Custody, TakenJob } from './custody.js';
import type { HostLease } from './host-lease.js';

/** What the member asks of the daemon's supervisor. */
export interface MemberJobs {
  /** A claimed job: it queues for one of this host's slots. */
  adopt(jobId: string): void;
  /** A job taken over from a gone host: failed with `error`, unless it finished meanwhile. */
  failTakenOver(jobId: string, error: JobError): void;
}

export interface MemberDeps {
  lease: HostLease;
  custody: Custody;
  pool: SlotPool;
  jobs: MemberJobs;
  clock: Clock;
  logger: Logger;
  /** The engines this host can start. */
  engines: readonly string[];
  pinnedGraceSec: number;
  /** The others took this host for gone: the daemon must stop. */
  onFenced(): void;
}

/**
 * This daemon as one host of a shared store: every third of a lease it renews its lease, settles
 * hosts whose lease lapsed and jobs left with them past the grace, and claims queued jobs for its
 * free slots. Claims also run at once when a job is announced or a slot frees up.
 *
 * What the database says this host holds is settled from the database each time, not from the
 * answers of the statements that took it: a statement whose connection broke may have taken jobs
 * all the same. Jobs taken from a gone host are failed, and queued jobs this host holds that no
 * slot here waits for (on two rounds running, so that a claim on its way is not taken for one)
 * are queued for a slot.
 */
export class ClusterMember {
  readonly #d: MemberDeps;
  #timer: Timer | null = null;
  #claiming: Promise<void> | null = null;
  #claimAgain = false;
  #missedRenewal = false;
  #stopped = false;
  /** Taken jobs being failed: each is handed over once. */
  readonly #failing = new Set<string>();
  /** Held queued jobs that no slot here waited for at the last round. */
  #strays = new Set<string>();

  constructor(deps: MemberDeps) {
    this.#d = deps;
  }

  start(): void {
    this.#d.pool.onRelease(() => this.claimSoon());
    this.#arm(0);
  }

  /** Claims for the free slots now (again after the claim in flight, if one is). */
  claimSoon(): void {
    if (this.#stopped) return;
    if (this.#claiming !== null) {
      this.#claimAgain = true;
      return;
    }
    this.#claiming = this.#claim()
      .catch((error: unknown) => this.#d.logger.warn({ err: error }, 'could not claim queued jobs; the next tick tries again'))
      .finally(() => {
        this.#claiming = null;
        if (this.#claimAgain) {
          this.#claimAgain = false;
          this.claimSoon();
        }
      });
  }

  /** A clean stop: this host's unstarted queued jobs go back to the others, and its lease ends. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.#claiming;
    await this.#d.custody.releaseUnstarted();
    await this.#d.lease.leave();
  }

  #arm(delayMs: number): void {
    this.#timer = this.#d.clock.setTimer(delayMs, () => {
      void this.tick().finally(() => {
        if (!this.#stopped) this.#arm(this.#d.lease.ttlMs / 3);
      });
    });
  }

  /** One round, as the timer runs it every third of a lease: renew, settle the gone, adopt strays, claim. */
  async tick(): Promise<void> {
    let renewed: boolean;
    try {
      renewed = await this.#d.lease.renew(this.#missedRenewal);
    } catch (error) {
      if (!this.#missedRenewal) this.#d.logger.warn({ err: error }, 'could not reach the database to renew this host\'s lease; trying again');
      this.#missedRenewal = true;
      return;
    }
    this.#missedRenewal = false;
    if (!renewed) {
      this.#stopped = true;
      this.#d.logger.error({ host_id: this.#d.lease.hostId }, 'the other hosts took this one for gone (its lease lapsed) and settled its jobs; stopping');
      this.#d.onFenced();
      return;
    }
    try {
      for (let reaped = await this.#d.custody.reapOne(); reaped !== null; reaped = await this.#d.custody.reapOne()) {
        this.#d.logger.warn(reaped, 'took a host for gone; settling its jobs');
      }
      await this.#d.custody.overdue(this.#d.pinnedGraceSec);
      this.#failTaken(await this.#d.custody.takenOver());
      this.#adoptStrays(await this.#d.custody.heldQueued());
    } catch (error) {
      // A gone host's jobs may be locked by its last transaction until the server ends it: the next round tries again.
      this.#d.logger.warn({ err: error }, 'could not settle the jobs of gone hosts or of this one yet; the next round tries again');
    }
    this.claimSoon();
    await this.#claiming;
  }

  /** Fails each job taken from a gone host as that host's restart would have. */
  #failTaken(taken: readonly TakenJob[]): void {
    const active = new Set(taken.map((job) => job.job_id));
    for (const jobId of this.#failing) if (!active.has(jobId)) this.#failing.delete(jobId);
    for (const job of taken) {
      if (this.#failing.has(job.job_id)) continue;
      this.#failing.add(job.job_id);
      this.#d.jobs.failTakenOver(job.job_id, this.#takenError(job));
    }
  }

  #takenError(job: TakenJob): JobError {
    const gone = `host "${job.taken_from}" stopped renewing its lease`;
    if (job.status === 'running') return { code: 'DAEMON_RESTART_INTERRUPTED', message: `${gone} while this turn ran there` };
    if (job.sticky) return { code: 'INTERACTION_PROCESS_LOST', message: `the live engine process was on a host that is gone: ${gone} while the job waited` };
    return { code: 'HOST_LOST', message: `host "${job.taken_from}" holds this job's workspace and engine session and did not come back within pinned_grace_sec (${this.#d.pinnedGraceSec} s)` };
  }

  /** Queues for a slot the held queued jobs nothing here has waited for since the last round. */
  #adoptStrays(held: readonly string[]): void {
    const strays = new Set(held.filter((jobId) => !this.#d.pool.has(jobId)));
    for (const jobId of strays) {
      if (!this.#strays.has(jobId)) continue;
      strays.delete(jobId);
      this.#d.logger.warn({ job_id: jobId }, 'this host holds a queued job nothing here waited for (a claim whose answer was lost); queuing it for a slot');
      this.#d.jobs.adopt(jobId);
    }
    this.#strays = strays;
  }

  async #claim(): Promise<void> {
    const { max, used, queued } = this.#d.pool.stats();
    const claimed = await this.#d.custody.claim(max - used - queued, this.#d.engines);
    for (const jobId of claimed) this.#d.jobs.adopt(jobId);
    if (claimed.length > 0) this.#d.logger.debug({ jobs: claimed }, 'claimed queued jobs');
  }
}
