import type { Job } from '../../daemon/model/job.js';

/** A job's record as the daemon stores it: `job-000n`, an auto echo-auto job on codex, queued, created n seconds into 2025; `overrides` on top. */
export function makeJob(n: number, overrides: Partial<Job> = {}): Job {
  const created = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
  return {
    job_id: `job-${String(n).padStart(4, '0')}`, skill_id: 'echo-auto', skill_version: '1.0.0', engine: 'codex', execution_mode: 'auto', status: 'queued',
    interactive_require_user_reply: true, session_timeout_sec: 1200, hard_timeout_sec: 3600, model: null, interactive_profile: null, attempt: 0, max_attempt: null,
    pending_interaction_id: null, wait_deadline_at: null, session_handle: null, warnings: [], error: null,
    created_at: created, updated_at: created, started_at: null, finished_at: null, ...overrides,
  };
}
