import type { Clock, Timer } from '../clock.js';
import type { JobError } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import type { SlotPool } from '../slots/pool.js';
import type { Custody, ReapedHost } from './custody.js';
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
 */
export class ClusterMember {
  readonly #d: MemberDeps;
  #timer: Timer | null = null;
  #claiming: Promise<void> | null = null;
  #claimAgain = false;
  #missedRenewal = false;
  #stopped = false;

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
      void this.#tick().finally(() => {
        if (!this.#stopped) this.#arm(this.#d.lease.ttlMs / 3);
      });
    });
  }

  async #tick(): Promise<void> {
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
      for (let reaped = await this.#d.custody.reapOne(); reaped !== null; reaped = await this.#d.custody.reapOne()) this.#settle(reaped);
      for (const job of await this.#d.custody.overdue(this.#d.pinnedGraceSec)) {
        const message = `host "${job.host_id}" holds this job's workspace and engine session and did not come back within pinned_grace_sec (${this.#d.pinnedGraceSec} s)`;
        this.#d.jobs.failTakenOver(job.job_id, { code: 'HOST_LOST', message });
      }
    } catch (error) {
      // A gone host's jobs may be locked by its last transaction until the server ends it: the next tick tries again.
      this.#d.logger.warn({ err: error }, 'could not settle the jobs of a gone host yet; the next tick tries again');
    }
    this.claimSoon();
  }

  #settle(reaped: ReapedHost): void {
    const gone = `host "${reaped.host_id}" stopped renewing its lease`;
    this.#d.logger.warn({ host_id: reaped.host_id, taken: reaped.taken.length, released: reaped.released }, 'took a host for gone; settling its jobs');
    for (const job of reaped.taken) {
      const error: JobError = job.status === 'running'
        ? { code: 'DAEMON_RESTART_INTERRUPTED', message: `${gone} while this turn ran there` }
        : { code: 'INTERACTION_PROCESS_LOST', message: `the live engine process was on a host that is gone: ${gone} while the job waited` };
      this.#d.jobs.failTakenOver(job.job_id, error);
    }
  }

  async #claim(): Promise<void> {
    const { max, used, queued } = this.#d.pool.stats();
    const claimed = await this.#d.custody.claim(max - used - queued, this.#d.engines);
    for (const jobId of claimed) this.#d.jobs.adopt(jobId);
    if (claimed.length > 0) this.#d.logger.debug({ jobs: claimed }, 'claimed queued jobs');
  }
}
