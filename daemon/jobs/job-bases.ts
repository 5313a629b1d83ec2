import { loadSkill, type SkillDefinition } from '../skills/manifest.js';
import type { JobDocs } from '../store/job-docs.js';
import type { Job } from '../model/job.js';
import type { RunFolder } from '../model/run-folder.js';

/** What a job's turns are built from: its skill snapshot and its request. */
export interface JobBasis {
  skill: SkillDefinition;
  request: { input: Record<string, unknown>; parameter: Record<string, unknown> };
}

/**
 * The bases of active jobs, kept from their creation; after a restart one is read back the first
 * time a turn needs it: the skill from the run folder (`JobDocs.prepare` has made it), the
 * request from the job's documents. The supervisor's moves (moves.ts) forget a finished job's.
 */
export class JobBases {
  readonly #docs: JobDocs;
  readonly #folderOf: (jobId: string) => RunFolder;
  readonly #bases = new Map<string, JobBasis>();

  constructor(docs: JobDocs, folderOf: (jobId: string) => RunFolder) {
    this.#docs = docs;
    this.#folderOf = folderOf;
  }

  set(jobId: string, basis: JobBasis): void {
    this.#bases.set(jobId, basis);
  }

  async of(job: Job): Promise<JobBasis> {
    let basis = this.#bases.get(job.job_id);
    if (basis === undefined) {
      const [skill, request] = await Promise.all([loadSkill(this.#folderOf(job.job_id).skillDir, job.skill_id), this.#docs.request(job.job_id)]);
      basis = { skill, request: { input: request.input, parameter: request.parameter } };
      this.#bases.set(job.job_id, basis);
    }
    return basis;
  }

  forget(jobId: string): void {
    this.#bases.delete(jobId);
  }
}
