import { SkilldError } from '../../rpc/errors.js';
import type { ReplyParams } from '../jobs/reply-check.js';
import type { Custody } from './custody.js';

type CancelAnswer = { job_id: string; status: string; accepted: boolean };
type ReplyAnswer = { job_id: string; status: string; accepted: true };

/** The supervisor's part in a request that changes a job. */
export interface LocalJobs {
  cancel(jobId: string): Promise<CancelAnswer>;
  reply(params: ReplyParams): Promise<ReplyAnswer>;
  adopt(jobId: string): void;
}

/**
 * Where a request that changes a job is carried out: by this daemon when it holds the job (or
 * nobody does), else by the host that holds it. With the files store every job is this daemon's.
 */
export class JobRouter {
  readonly #local: LocalJobs;
  readonly #custody: Custody | null;
  readonly #hostId: string;

  constructor(local: LocalJobs, custody: Custody | null, hostId: string) {
    this.#local = local;
    this.#custody = custody;
    this.#hostId = hostId;
  }

  /** A queued job nobody holds is taken here first; if the cancel then fails, the job runs here as a claimed one would. */
  async cancel(jobId: string): Promise<CancelAnswer> {
    if (this.#custody === null) return this.#local.cancel(jobId);
    const { host, took } = await this.#custody.holder(jobId, true);
    this.#checkHere(jobId, host);
    return this.#local.cancel(jobId).catch((error: unknown) => {
      if (took) this.#local.adopt(jobId);
      throw error;
    });
  }

  async reply(params: ReplyParams): Promise<ReplyAnswer> {
    if (this.#custody !== null) this.#checkHere(params.job_id, (await this.#custody.holder(params.job_id, false)).host);
    return this.#local.reply(params);
  }

  /** Queued jobs that wait in the shared queue, for a slot of whichever host claims them (none with the files store). */
  async unclaimed(): Promise<number> {
    return this.#custody === null ? 0 : this.#custody.unclaimed();
  }

  #checkHere(jobId: string, host: string | null): void {
    if (host === null || host === this.#hostId) return;
    throw new SkilldError('JOB_OWNER_UNREACHABLE', `job ${jobId} is held by host "${host}", which runs its engine; send the request to that host's daemon`, { details: { host_id: host } });
  }
}
