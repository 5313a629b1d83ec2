import { SkilldError } from '../../rpc/errors.js';
import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import { inputPaths } from '../sandbox/input-paths.js';
import type { JobSandbox } from '../sandbox/job-sandbox.js';
import type { SkillRegistry } from '../skills/registry.js';
import { asStorageError } from '../store/storage-fault.js';
import type { JobDocs } from '../store/job-docs.js';
import type { Store } from '../store/store.js';
import { planCreate, type CreateParams, type CreatePlan } from './create-request.js';
import type { EngineName, InteractiveProfile, Job, JobOwner } from '../model/job.js';
import { newJob, storeNewJob } from './new-job.js';
import type { RunFolder } from '../model/run-folder.js';

export interface CreationDeps {
  config: Config;
  store: Store;
  docs: JobDocs;
  clock: Clock;
  skills: SkillRegistry;
  sandbox: Pick<JobSandbox, 'refuseJob' | 'checkInputPaths'>;
  profileFor(name: EngineName): Promise<InteractiveProfile>;
  runFolder(jobId: string): RunFolder;
}

/**
 * `jobs/create` up to the stored job: the create-time checks (docs/protocol.md), the queue's
 * limit, then the job's record, documents and run folder, all or nothing.
 */
export class JobCreation {
  readonly #d: CreationDeps;
  /** Jobs still being created count against `max_queue` too, so that concurrent requests cannot overfill it. */
  #creating = 0;

  constructor(deps: CreationDeps) {
    this.#d = deps;
  }

  /** The new job, stored as `queued`, and the plan its turns are built from. */
  async create(params: CreateParams, owner?: JobOwner): Promise<{ job: Job; plan: CreatePlan }> {
    const { config, store, sandbox } = this.#d;
    const plan = planCreate(params, this.#d.skills, config.default_engine, config.store !== 'files');
    const refused = sandbox.refuseJob(plan.engine) ?? sandbox.checkInputPaths(inputPaths(plan.skill.input_paths, plan.input));
    if (refused !== null) throw refused;
    // Counted before the store is asked.
    this.#creating += 1;
    try {
      if ((await store.countByStatus()).queued + this.#creating > config.max_queue) throw new SkilldError('QUEUE_FULL', `${config.max_queue} jobs are already queued (max_queue)`);
      const profile = plan.mode === 'interactive' ? await this.#d.profileFor(plan.engine) : null;
      const job = newJob(plan, params, config, profile, this.#d.clock.now(), owner);
      await storeNewJob(job, plan, this.#d.docs, this.#d.runFolder(job.job_id));
      return { job, plan };
    } catch (error) {
      throw asStorageError(error, 'the new job');
    } finally {
      this.#creating -= 1;
    }
  }
}
