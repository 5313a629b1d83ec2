import type { VisibleTo } from '../model/access.js';
import type { Job } from '../model/job.js';
import type { JobStatus } from '../model/states.js';

export interface JobQuery {
  status?: JobStatus;
  /** Only the jobs seen in this view (model/access.ts); absent: every job. */
  visible_to?: VisibleTo;
  skill_id?: string;
  /** Only jobs whose id starts with this (skillctl's short ids). */
  id_prefix?: string;
  limit: number;
  /** A job_id: list jobs created before it (the `next` cursor of the previous page). */
  before?: string;
}

/**
 * Which finished jobs retention selects (docs/retention.md): those finished before
 * `finished_before`, and those beyond the `keep_newest` most recently finished, each among the
 * jobs of `statuses` (all terminal statuses when absent). Active jobs are never selected.
 */
export interface ExpiryQuery {
  finished_before?: string;
  keep_newest?: number;
  statuses?: readonly JobStatus[];
  limit: number;
}

/** A finished job retention selected. */
export interface ExpiredJob {
  job_id: string;
  status: JobStatus;
  skill_id: string;
  finished_at: string | null;
}

/** An engine process the daemon started, recorded so that a later start can stop survivors. */
export interface ProcessRecord {
  job_id: string;
  pid: number;
  pgid: number;
  /** From /proc/<pid>/stat: with the pid it identifies the process, never a recycled pid. */
  start_time: string;
}

/** A problem found while loading state, kept for `daemon/status` and the log. */
export interface StoreNotice {
  code: 'STATE_FILE_CORRUPT' | 'STATE_JOURNAL_DAMAGED' | 'STATE_RECORD_DAMAGED' | 'STATE_COMPACTION_DEFERRED' | 'FINISHED_LOG_TRUNCATED';
  message: string;
  path: string;
}

/**
 * Durable job state; `putJob` resolves once the change is durable. Reads are asynchronous so that
 * a store may live outside the daemon (a database shared by several hosts); the files store
 * answers them from memory.
 */
export interface Store {
  readonly notices: readonly StoreNotice[];
  getJob(jobId: string): Promise<Job | undefined>;
  /** Whether the job exists, without reading it (a finished job is parsed when it is read). */
  hasJob(jobId: string): Promise<boolean>;
  /** Newest first. */
  listJobs(query: JobQuery): Promise<{ jobs: Job[]; next: string | null }>;
  /** Jobs in a non-terminal status, oldest first. */
  activeJobs(): Promise<Job[]>;
  countByStatus(): Promise<Record<JobStatus, number>>;
  putJob(job: Job): Promise<void>;
  /** Finished jobs the query selects, the earliest finished first. */
  expiredJobs(query: ExpiryQuery): Promise<ExpiredJob[]>;
  /**
   * Removes finished jobs with everything the store keeps of them (documents, events); a job that
   * is not finished, or not there, is left. Resolves with the ids removed, once durable.
   */
  removeJobs(jobIds: readonly string[]): Promise<string[]>;
  /** Of `jobIds`, those the store holds. */
  existingJobs(jobIds: readonly string[]): Promise<Set<string>>;
  /**
   * Which host holds (or last held) each of `jobIds` in a store shared by several hosts; a job no
   * host has claimed yet is absent. A store of one daemon's own answers an empty map.
   */
  holders(jobIds: readonly string[]): Promise<Map<string, string>>;
  processes(): Promise<ProcessRecord[]>;
  putProcess(record: ProcessRecord): Promise<void>;
  removeProcess(pid: number): Promise<void>;
  close(): Promise<void>;
}
