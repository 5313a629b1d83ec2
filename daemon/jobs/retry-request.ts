import { SkilldError } from '../../rpc/errors.js';
import type { CreateParams } from './create-request.js';
import type { JobQueries } from './queries.js';
import { isTerminal } from '../model/states.js';

/**
 * `jobs/retry`: the `jobs/create` params of a finished job, so that the same request runs again
 * as a new job. The job record keeps the settings as they were resolved at creation (timeouts,
 * approvals, model), its stored request the input and parameter. JOB_NOT_FINISHED while the job can
 * still change.
 */
export async function retryRequest(queries: JobQueries, jobId: string): Promise<CreateParams> {
  const job = await queries.get(jobId);
  if (!isTerminal(job.status)) {
    throw new SkilldError('JOB_NOT_FINISHED', `job "${jobId}" is ${job.status}; only a finished job can be retried`, { details: { status: job.status } });
  }
  const request = await queries.request(jobId);
  return {
    skill_id: job.skill_id,
    engine: job.engine,
    execution_mode: job.execution_mode,
    interactive_require_user_reply: job.interactive_require_user_reply,
    session_timeout_sec: job.session_timeout_sec,
    hard_timeout_sec: job.hard_timeout_sec,
    // A request stored by an early version may lack either.
    input: request.input ?? {},
    parameter: request.parameter ?? {},
    ...(job.model === null ? {} : { model: job.model }),
    ...(job.approvals === undefined ? {} : { approvals: job.approvals }),
    ...(job.share_with === undefined || job.share_with.length === 0 ? {} : { share_with: job.share_with }),
    // A test job's retry is a test job too: never a call to the real provider it did not ask for.
    ...(job.scripted_model === undefined ? {} : { scripted_model: job.scripted_model }),
  };
}
