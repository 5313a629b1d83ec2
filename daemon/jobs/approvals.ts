import { SkilldError } from '../../rpc/errors.js';
import type { ApprovalDecision, ApprovalRequest } from '../engines/live-session.js';
import type { Pending } from '../model/gate.js';
import type { Job } from '../model/job.js';

/**
 * Tool approvals as questions: with `approvals: "ask"`, a live engine's permission request puts
 * the job in `waiting_user` with a pending interaction of kind `approval`, and the reply (`allow`
 * or `deny`) answers the engine inside the same turn.
 */

export const APPROVAL_KIND = 'approval';
export const APPROVAL_ANSWERS: readonly ApprovalDecision[] = ['allow', 'deny'];

/** Refuses a job that asks for approvals where nothing could ask them: only a live session can. */
export function checkApprovals(job: Job): void {
  if (job.approvals !== 'ask') return;
  if (job.interactive_profile?.kind === 'sticky_process') return;
  const why = job.execution_mode === 'auto' ? 'an auto job never waits for a person' : `${job.engine} runs this job as ${job.interactive_profile?.kind ?? 'a one-shot turn'}, not in a live session`;
  throw new SkilldError('INVALID_PARAMS', `approvals "ask" needs an interactive job in a live session (profile sticky_process): ${why}; pass approvals "auto" to let tools run unasked`, {
    details: { path: '/approvals', message: why },
  });
}

/** The question a permission request becomes. */
export function approvalPending(interactionId: number, request: ApprovalRequest): Pending {
  return {
    interaction_id: interactionId,
    prompt: `Allow the agent to ${request.summary}?`,
    kind: APPROVAL_KIND,
    options: APPROVAL_ANSWERS.map((answer) => ({ label: answer, value: answer })),
    ui_hints: { approval: { kind: request.kind, summary: request.summary } },
    context: { request: request.detail },
  };
}

/** Refuses a reply to an approval that is neither `allow` nor `deny` (INVALID_PARAMS), before it is stored. */
export function checkApprovalReply(response: unknown): void {
  if (APPROVAL_ANSWERS.includes(response as ApprovalDecision)) return;
  throw new SkilldError('INVALID_PARAMS', `the pending interaction is an approval: response must be "allow" or "deny"`, { details: { path: '/response', message: 'must be "allow" or "deny"' } });
}

/** The engine's answer: `allow` only when a person said so; anything else (the auto-decision at a deadline) denies. */
export function decisionOf(response: unknown): ApprovalDecision {
  return response === 'allow' ? 'allow' : 'deny';
}
