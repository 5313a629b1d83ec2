import { SkilldError } from '../../rpc/errors.js';
import { readArtifact, type ArtifactChunk, type ArtifactParams } from '../jobs/job-artifacts.js';
import { readLogs, type LogChunk, type LogJobs, type LogsParams } from '../jobs/job-logs.js';
import type { ReplyParams } from '../jobs/reply-check.js';
import type { Custody } from './custody.js';
import type { Mailbox, RoutedMethod } from './mailbox.js';

type CancelAnswer = { job_id: string; status: string; accepted: boolean };
type ReplyAnswer = { job_id: string; status: string; accepted: true };

/** The supervisor's part in a request for a job: one that changes it, or a read of its logs. */
export interface LocalJobs extends LogJobs {
  cancel(jobId: string): Promise<CancelAnswer>;
  reply(params: ReplyParams): Promise<ReplyAnswer>;
  adopt(jobId: string): void;
}

/** The shared store's part: who holds a job, and the way to ask that host. */
export interface ClusterRoutes {
  custody: Custody;
  mailbox: Mailbox;
}

/**
 * Where a request that changes a job is carried out: by this daemon when it holds the job (or
 * nobody does), else by the host that holds it, through the mailbox, answered once that host
 * stored what the request changed. A job's logs are read where it ran. With the files store
 * every job is this daemon's.
 */
export class JobRouter {
  readonly #local: LocalJobs;
  readonly #cluster: ClusterRoutes | null;
  readonly #hostId: string;

  constructor(local: LocalJobs, cluster: ClusterRoutes | null, hostId: string) {
    this.#local = local;
    this.#cluster = cluster;
    this.#hostId = hostId;
  }

  /**
   * A queued job nobody holds is taken here first; if the cancel then fails, the job runs here as
   * a claimed one would. `routed`: another host sent it here, so it goes no further.
   */
  async cancel(jobId: string, routed = false): Promise<CancelAnswer> {
    if (this.#cluster === null) return this.#local.cancel(jobId);
    const { host, took, gone } = await this.#cluster.custody.holder(jobId, true);
    if (this.#elsewhere(jobId, host, gone, routed)) return this.#cluster.mailbox.send(host as string, jobId, 'jobs/cancel', { job_id: jobId }) as Promise<CancelAnswer>;
    return this.#local.cancel(jobId).catch((error: unknown) => {
      if (took) this.#local.adopt(jobId);
      throw error;
    });
  }

  async reply(params: ReplyParams, routed = false): Promise<ReplyAnswer> {
    if (this.#cluster === null) return this.#local.reply(params);
    const { host, gone } = await this.#cluster.custody.holder(params.job_id, false);
    if (this.#elsewhere(params.job_id, host, gone, routed)) return this.#cluster.mailbox.send(host as string, params.job_id, 'jobs/reply', { ...params }) as Promise<ReplyAnswer>;
    return this.#local.reply(params);
  }

  /** A chunk of the job's logs, read by the host in whose run folder they are. */
  async logs(params: LogsParams, routed = false): Promise<LogChunk> {
    if (this.#cluster === null || routed) return readLogs(this.#local, params);
    const host = await this.#cluster.custody.logsHost(params.job_id);
    if (host === null || host === this.#hostId) return readLogs(this.#local, params);
    return this.#cluster.mailbox.send(host, params.job_id, 'jobs/logs', { ...params }) as Promise<LogChunk>;
  }

  /** A chunk of one of the job's artifacts, read by the host in whose run folder they are. */
  async artifact(params: ArtifactParams, routed = false): Promise<ArtifactChunk> {
    if (this.#cluster === null || routed) return readArtifact(this.#local, params);
    const host = await this.#cluster.custody.logsHost(params.job_id);
    if (host === null || host === this.#hostId) return readArtifact(this.#local, params);
    return this.#cluster.mailbox.send(host, params.job_id, 'jobs/artifact', { ...params }) as Promise<ArtifactChunk>;
  }

  /** Carries out a request another host left for this one, as held here. */
  carry(method: RoutedMethod, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'jobs/cancel':
        return this.cancel(params['job_id'] as string, true);
      case 'jobs/logs':
        return this.logs(params as unknown as LogsParams, true);
      case 'jobs/artifact':
        return this.artifact(params as unknown as ArtifactParams, true);
      case 'jobs/reply':
        return this.reply(params as unknown as ReplyParams, true);
      default:
        // A newer host's method: refused, never taken for another one.
        return Promise.reject(new SkilldError('INVALID_PARAMS', `this host (an older version) does not carry out "${String(method)}"`));
    }
  }

  /** Queued jobs that wait in the shared queue, for a slot of whichever host claims them (none with the files store). */
  async unclaimed(): Promise<number> {
    return this.#cluster === null ? 0 : this.#cluster.custody.unclaimed();
  }

  /**
   * Whether another host holds the job; a request routed here for a job that moved on meanwhile
   * is refused, not sent again, and so is one for a job whose host is gone (it is being failed).
   */
  #elsewhere(jobId: string, host: string | null, gone: boolean, routed: boolean): boolean {
    if (gone) {
      const message = `host "${String(host)}", which held job ${jobId} (its workspace and engine), is gone; the job is being settled as its restart would; nothing of the request was kept`;
      throw new SkilldError('JOB_OWNER_UNREACHABLE', message, { details: { host_id: host, in_doubt: false } });
    }
    if (host === null || host === this.#hostId) return false;
    if (!routed) return true;
    throw new SkilldError('JOB_OWNER_UNREACHABLE', `job ${jobId} is now held by host "${host}"; send the request again`, { details: { host_id: host, in_doubt: false } });
  }
}
