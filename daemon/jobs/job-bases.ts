import { loadSkill, type SkillDefinition } from '../skills/manifest.js';
import type { Job } from './job.js';
import type { RunFolder } from './run-folder.js';

/** What a job's turns are built from: its skill snapshot and its request (`request.json`). */
export interface JobBasis {
  skill: SkillDefinition;
  request: { input: Record<string, unknown>; parameter: Record<string, unknown> };
}

/**
 * The bases of active jobs, kept from their creation; after a restart one is read back from the
 * job's run folder the first time a turn needs it. The supervisor forgets a finished job's.
 */
export class JobBases {
  readonly #folderOf: (jobId: string) => RunFolder;
  readonly #bases = new Map<string, JobBasis>();

  constructor(folderOf: (jobId: string) => RunFolder) {
    this.#folderOf = folderOf;
  }

  set(jobId: string, basis: JobBasis): void {
    this.#bases.set(jobId, basis);
  }

  async of(job: Job): Promise<JobBasis> {
    let basis = this.#bases.get(job.job_id);
    if (basis === undefined) {
      const folder = this.#folderOf(job.job_id);
      const [skill, request] = await Promise.all([loadSkill(folder.skillDir, job.skill_id), folder.readRequest<JobBasis['request']>()]);
      basis = { skill, request };
      this.#bases.set(job.job_id, basis);
    }
    return basis;
  }

  forget(jobId: string): void {
    this.#bases.delete(jobId);
  }
}
