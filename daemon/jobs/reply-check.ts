import { SkilldError } from '../../rpc/errors.js';
import { APPROVAL_KIND, checkApprovalReply } from './approvals.js';
import { isRepeatedReply, pendingKind, type Interaction } from '../model/interactions.js';
import type { Job } from '../model/job.js';
import { checkReply } from './turn-plan.js';

/** `jobs/reply` params after shape validation. */
export interface ReplyParams {
  job_id: string;
  interaction_id: number;
  response: unknown;
  idempotency_key?: string;
}

/**
 * What a `jobs/reply` means for the job as it stands: `repeat` for a retry of the reply already
 * stored under its idempotency key (answered as accepted again, nothing changes), `accept` for a
 * reply to take. Anything else is refused with its stable code, before anything is stored.
 */
export function checkReplyRequest(job: Job, history: readonly Interaction[], params: ReplyParams): 'repeat' | 'accept' {
  if (job.execution_mode !== 'interactive') throw new SkilldError('JOB_NOT_INTERACTIVE', `job ${job.job_id} runs in auto mode and takes no replies`);
  if (isRepeatedReply(history, params.idempotency_key, params.response)) return 'repeat';
  if (job.status !== 'waiting_user') throw new SkilldError('JOB_NOT_WAITING', `job ${job.job_id} is ${job.status}, not waiting_user`);
  if (params.interaction_id !== job.pending_interaction_id) {
    throw new SkilldError('INTERACTION_STALE', `interaction ${params.interaction_id} is not the pending one (${String(job.pending_interaction_id)})`, {
      details: { pending_interaction_id: job.pending_interaction_id },
    });
  }
  if (pendingKind(history, job) === APPROVAL_KIND) checkApprovalReply(params.response);
  else checkReply(job, params.response);
  return 'accept';
}
