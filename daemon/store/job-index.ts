import type { Job } from '../jobs/job.js';
import { JOB_STATUSES, type JobStatus } from '../jobs/states.js';
import type { JobQuery } from './store.js';

/** In-memory view of every job: lookup by id, creation order for paging, counts per status. */
export class JobIndex {
  readonly #byId = new Map<string, Job>();
  #order: string[] = [];
  readonly #position = new Map<string, number>();
  readonly #counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;

  get(jobId: string): Job | undefined {
    return this.#byId.get(jobId);
  }

  put(job: Job): void {
    const previous = this.#byId.get(job.job_id);
    if (previous === undefined) {
      this.#position.set(job.job_id, this.#order.length);
      this.#order.push(job.job_id);
    } else {
      this.#counts[previous.status] -= 1;
    }
    this.#counts[job.status] += 1;
    this.#byId.set(job.job_id, job);
  }

  /** Restores creation order after a bulk load from two sources. */
  sort(): void {
    const jobs = [...this.#byId.values()].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.job_id.localeCompare(b.job_id));
    this.#order = jobs.map((job) => job.job_id);
    this.#position.clear();
    this.#order.forEach((id, i) => this.#position.set(id, i));
  }

  counts(): Record<JobStatus, number> {
    return { ...this.#counts };
  }

  /** Newest first, filtered, one page; `next` is the cursor for the following page. */
  list(query: JobQuery): { jobs: Job[]; next: string | null } {
    let i = query.before === undefined ? this.#order.length - 1 : (this.#position.get(query.before) ?? this.#order.length) - 1;
    const jobs: Job[] = [];
    for (; i >= 0; i -= 1) {
      const job = this.#byId.get(this.#order[i] as string) as Job;
      if (query.status !== undefined && job.status !== query.status) continue;
      if (query.skill_id !== undefined && job.skill_id !== query.skill_id) continue;
      if (jobs.length === query.limit) return { jobs, next: jobs[jobs.length - 1]?.job_id ?? null };
      jobs.push(job);
    }
    return { jobs, next: null };
  }
}
