import type { WarningCode } from '../../rpc/errors.js';
import type { Pending } from '../model/gate.js';
import type { Interaction } from '../model/interactions.js';
import type { Job, JobError } from '../model/job.js';
import type { SkillFiles } from '../model/skill-snapshot.js';

/** What a job keeps of its `jobs/create` request (`jobs/retry` runs it again). */
export interface StoredRequest {
  input: Record<string, unknown>;
  parameter: Record<string, unknown>;
  model: string | null;
}

/** A job's outcome once it is terminal (`jobs/result`). */
export interface JobResult {
  job_id: string;
  status: string;
  output: Record<string, unknown> | null;
  warnings: WarningCode[];
  error: JobError | null;
}

/** What a new job is stored with besides its record: its request and a snapshot of its skill. */
export interface NewJobDocs {
  request: StoredRequest;
  skillFiles: SkillFiles;
}

/**
 * Everything a job keeps besides its record, where every daemon of the store can read it: the
 * request and skill snapshot it was created with, its interaction rounds, the pending question
 * and its result. A job's workspace and its attempts' logs stay on the host that ran them
 * (`RunFolder`). Writes resolve once durable.
 */
export interface JobDocs {
  /** Stores a new job with its documents, all or nothing: the job exists once this resolves. */
  create(job: Job, docs: NewJobDocs): Promise<void>;
  request(jobId: string): Promise<StoredRequest>;
  /**
   * Makes the job's run folder on this host ready for a turn: its workspace, and its skill
   * snapshot (`RunFolder.skillDir`) with a SKILL.md that points at this host's artifacts folder.
   * Cheap once done.
   */
  prepare(job: Job): Promise<void>;
  /** The latest version of the interaction rounds. */
  history(jobId: string): Promise<Interaction[]>;
  /** Stores a new version of the rounds; `exists` says a version was stored before. */
  putHistory(jobId: string, history: readonly Interaction[], exists: boolean): Promise<void>;
  pending(jobId: string): Promise<Pending | null>;
  putPending(jobId: string, pending: Pending): Promise<void>;
  result(jobId: string): Promise<JobResult | null>;
  putResult(result: JobResult): Promise<void>;
}
