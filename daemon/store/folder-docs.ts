import type { Pending } from '../model/gate.js';
import type { Interaction } from '../model/interactions.js';
import type { Job } from '../model/job.js';
import { patchSkillMd } from '../jobs/prompt.js';
import { RunFolder } from '../jobs/run-folder.js';
import type { JobDocs, JobResult, NewJobDocs, StoredRequest } from './job-docs.js';
import type { Store } from './store.js';

/** The files store's job documents: each lives in the job's run folder (docs/state.md). */
export class FolderDocs implements JobDocs {
  readonly #store: Store;
  readonly #runsDir: string;

  constructor(store: Store, runsDir: string) {
    this.#store = store;
    this.#runsDir = runsDir;
  }

  /**
   * The run folder first, then the record that makes the job exist. A failed record removes the
   * folder; a crash in between leaves a folder no job names, never a job without its request.
   */
  async create(job: Job, docs: NewJobDocs): Promise<void> {
    const folder = this.#folder(job.job_id);
    const original = docs.skillFiles.get('SKILL.md')?.toString('utf8') ?? '';
    await folder.create(docs.skillFiles, patchSkillMd(original, job.execution_mode, folder.artifactsDir), docs.request);
    await this.#store.putJob(job).catch(async (error: unknown) => {
      await folder.remove();
      throw error;
    });
  }

  async request(jobId: string): Promise<StoredRequest> {
    return this.#folder(jobId).readRequest<StoredRequest>();
  }

  /** Made whole when the job was created. */
  async prepare(): Promise<void> {}

  history(jobId: string): Promise<Interaction[]> {
    return this.#folder(jobId).readHistory<Interaction>();
  }

  putHistory(jobId: string, history: readonly Interaction[], exists: boolean): Promise<void> {
    return this.#folder(jobId).writeHistory(history, exists);
  }

  pending(jobId: string): Promise<Pending | null> {
    return this.#folder(jobId).readPending<Pending>();
  }

  putPending(jobId: string, pending: Pending): Promise<void> {
    return this.#folder(jobId).writePending(pending);
  }

  result(jobId: string): Promise<JobResult | null> {
    return this.#folder(jobId).readResult<JobResult>();
  }

  putResult(result: JobResult): Promise<void> {
    return this.#folder(result.job_id).writeResult(result);
  }

  #folder(jobId: string): RunFolder {
    return new RunFolder(this.#runsDir, jobId);
  }
}
