import { randomBytes } from 'node:crypto';
import type { Config } from '../base/config.js';
import type { JobDocs } from '../store/job-docs.js';
import { checkApprovals } from './approvals.js';
import type { CreateParams, CreatePlan } from './create-request.js';
import type { InteractiveProfile, Job, JobOwner } from '../model/job.js';
import type { RunFolder } from '../model/run-folder.js';
import { jobSkillFiles } from '../model/skill-snapshot.js';
import { checkFirstPrompt } from './turn-plan.js';

/**
 * Randomness first (5 bytes in hex), then the creation time in base 36: a start of 4 to 6
 * characters names one job, as docker's short ids do. Jobs are listed by `created_at`, never by
 * id, so nothing needs ids in time order (ids of the older form, time first, stay valid).
 */
export function newJobId(now: Date): string {
  return `job-${randomBytes(5).toString('hex')}-${now.getTime().toString(36).padStart(9, '0')}`;
}

/**
 * The record of a job just created: queued, no attempt yet, limits from the request or the config;
 * its owner, and who it is shared with (the request's entries and its skill's).
 */
export function newJob(plan: CreatePlan, params: CreateParams, config: Config, profile: InteractiveProfile | null, now: Date, owner?: JobOwner): Job {
  const at = now.toISOString();
  const shared = [...new Set([...(params.share_with ?? []), ...plan.skill.share_with])];
  return {
    ...(owner === undefined ? {} : { owner }),
    ...(shared.length === 0 ? {} : { share_with: shared }),
    ...(plan.scriptedModel === null ? {} : { scripted_model: plan.scriptedModel }),
    job_id: newJobId(now),
    skill_id: plan.skill.id,
    skill_version: plan.skill.version,
    engine: plan.engine,
    execution_mode: plan.mode,
    status: 'queued',
    interactive_require_user_reply: params.interactive_require_user_reply ?? true,
    session_timeout_sec: params.session_timeout_sec ?? config.session_timeout_sec,
    hard_timeout_sec: params.hard_timeout_sec ?? config.hard_timeout_sec,
    model: params.model ?? null,
    approvals: params.approvals ?? plan.skill.approvals,
    interactive_profile: profile,
    isolation: null,
    attempt: 0,
    max_attempt: plan.mode === 'interactive' ? plan.skill.max_attempt : null,
    pending_interaction_id: null,
    wait_deadline_at: null,
    session_handle: null,
    warnings: [],
    error: null,
    created_at: at,
    updated_at: at,
    started_at: null,
    finished_at: null,
  };
}

/**
 * Checks a new job against what it asks for (approvals, a first prompt its engine can take), then
 * stores it with its request and skill snapshot, all or nothing (`JobDocs.create`).
 */
export async function storeNewJob(job: Job, plan: CreatePlan, docs: JobDocs, folder: RunFolder): Promise<Job> {
  checkApprovals(job);
  checkFirstPrompt({ job, skill: plan.skill, folder, request: plan });
  await docs.create(job, { request: { input: plan.input, parameter: plan.parameter, model: job.model }, skillFiles: jobSkillFiles(plan.skill.files) });
  return job;
}
