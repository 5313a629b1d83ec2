import { LRUCache } from 'lru-cache';
import { SkilldError, type WarningCode } from '../../rpc/errors.js';
import type { JobDocs, StoredRequest } from '../store/job-docs.js';
import type { Store } from '../store/store.js';
import type { Pending } from '../model/gate.js';
import type { Interaction } from '../model/interactions.js';
import type { Job, JobError } from '../model/job.js';
import { RunFolder } from '../model/run-folder.js';
import { isTerminal } from '../model/states.js';
import { listArtifacts } from './job-artifacts.js';

/** The answer of `jobs/result` (docs/protocol.md); `left_out` only when an artifact was left out. */
export interface JobResultAnswer {
  job_id: string;
  status: string;
  output: unknown;
  artifacts: string[];
  warnings: WarningCode[];
  error: JobError | null;
  left_out?: string[];
}

/** About this much of a job's rounds per `jobs/history` answer, well within an answer's 8 MiB. */
export const HISTORY_PAGE_BYTES = 4 * 1024 * 1024;

/** What a job was asked to do: its request's input and parameter, shown by `jobs/get`. */
export interface Asked {
  input: unknown;
  parameter: unknown;
}

/**
 * How much of the requests `jobs/get` showed lately is kept in memory: a request never changes
 * once stored, and reading it from its file (or its row) at each call tripled the cost of a
 * `jobs/get` (P1). Bounded by the size of their JSON: a few large inputs do not crowd out memory.
 */
const ASKED_CACHE = { max: 4096, maxSize: 8 * 1024 * 1024 } as const;

/** Read-only views of a job, its documents and its run folder: result, pending, history. */
export class JobQueries {
  readonly #store: Store;
  readonly #docs: JobDocs;
  readonly #runsDir: string;
  readonly #asked = new LRUCache<string, Asked>({ ...ASKED_CACHE, sizeCalculation: (asked) => Math.max(1, JSON.stringify(asked).length) });

  constructor(store: Store, docs: JobDocs, runsDir: string) {
    this.#store = store;
    this.#docs = docs;
    this.#runsDir = runsDir;
  }

  async get(jobId: string): Promise<Job> {
    const job = await this.#store.getJob(jobId);
    if (job === undefined) throw jobNotFound(jobId);
    return job;
  }

  /** JOB_NOT_FOUND unless the job exists; for requests that only name a job. */
  async requireJob(jobId: string): Promise<void> {
    if (!(await this.#store.hasJob(jobId))) throw jobNotFound(jobId);
  }

  folder(jobId: string): RunFolder {
    return new RunFolder(this.#runsDir, jobId);
  }

  /** jobs/result: the output once the job ended, the artifacts as they are now, and the links among them left out. */
  async result(jobId: string): Promise<JobResultAnswer> {
    const job = await this.get(jobId);
    const [saved, { files, leftOut }] = await this.#unlessRemoved(jobId, Promise.all([isTerminal(job.status) ? this.#docs.result(jobId) : null, listArtifacts(this.folder(jobId))]));
    const answer = { job_id: jobId, status: job.status, output: saved?.output ?? null, artifacts: files, warnings: job.warnings, error: job.error };
    // Found each time the folder is read, so it is not one of the job's own stored warnings.
    return leftOut.length === 0 ? answer : { ...answer, warnings: [...job.warnings, 'ARTIFACT_LINK_OUTSIDE'], left_out: leftOut };
  }

  /** What the job was created with (`jobs/retry`). */
  request(jobId: string): Promise<StoredRequest> {
    return this.#unlessRemoved(jobId, this.#docs.request(jobId));
  }

  /**
   * What a job was asked to do, for `jobs/get`: its stored request's input and parameter, or null
   * each where no request is stored for it (a record made by hand, a folder removed): the job is
   * shown all the same. A store that cannot be read still fails the call. Kept once read (see
   * `ASKED_CACHE`); a missing request is not, so one stored later is shown.
   */
  async asked(jobId: string): Promise<Asked> {
    const kept = this.#asked.get(jobId);
    if (kept !== undefined) return kept;
    const request = await this.request(jobId).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    });
    if (request === null) return { input: null, parameter: null };
    const asked = { input: request?.input ?? {}, parameter: request?.parameter ?? {} };
    this.#asked.set(jobId, asked);
    return asked;
  }

  /** jobs/pending: the persisted pending interaction while the job waits. */
  async pending(jobId: string): Promise<{ job_id: string; status: string; pending: Pending | null }> {
    const job = await this.get(jobId);
    const pending = job.status === 'waiting_user' ? await this.#unlessRemoved(jobId, this.#docs.pending(jobId)) : null;
    return { job_id: jobId, status: job.status, pending };
  }

  /**
   * jobs/history: the ask/reply rounds after interaction `after` (LC-7), as many as fit in
   * `HISTORY_PAGE_BYTES` (at least one); `next` is the `after` of the following page, or null.
   */
  async history(jobId: string, after = 0): Promise<{ job_id: string; interactions: Array<Omit<Interaction, 'idempotency_key'>>; next: number | null }> {
    await this.requireJob(jobId);
    const rounds = (await this.#unlessRemoved(jobId, this.#docs.history(jobId))).filter((round) => round.interaction_id > after);
    const interactions: Array<Omit<Interaction, 'idempotency_key'>> = [];
    let bytes = 0;
    for (const { idempotency_key: _key, ...round } of rounds) {
      bytes += Buffer.byteLength(JSON.stringify(round));
      if (interactions.length > 0 && bytes > HISTORY_PAGE_BYTES) break;
      interactions.push(round);
    }
    const more = interactions.length < rounds.length;
    return { job_id: jobId, interactions, next: more ? (interactions[interactions.length - 1]?.interaction_id ?? null) : null };
  }

  /**
   * What `read` gives, or JOB_NOT_FOUND when retention removed the job meanwhile (its documents
   * went with it, so the read failed or found nothing): never half a job.
   */
  async #unlessRemoved<T>(jobId: string, read: Promise<T>): Promise<T> {
    const outcome = await read.then((value) => ({ value }), (error: unknown) => ({ error }));
    if (!(await this.#store.hasJob(jobId))) throw jobNotFound(jobId);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }
}

function jobNotFound(jobId: string): SkilldError {
  return new SkilldError('JOB_NOT_FOUND', `no job "${jobId}"`);
}
