// What a jobs/reply means for a job as it stands: a repeat, a reply to take, or a refusal with its
// stable code before anything is stored.
import t from 'tap';
import { SkilldError } from '../../rpc/errors.js';
import type { Interaction } from '../../daemon/model/interactions.js';
import type { Job } from '../../daemon/model/job.js';
import { checkReplyRequest } from '../../daemon/jobs/reply-check.js';

const waiting = {
  job_id: 'job-1', engine: 'gemini', execution_mode: 'interactive', status: 'waiting_user', pending_interaction_id: 2,
  interactive_profile: { kind: 'resumable' }, model: null,
} as unknown as Job;

function round(id: number, kind: string, reply: { response: unknown; key: string } | null = null): Interaction {
  return {
    interaction_id: id, prompt: 'q', kind, response: reply?.response ?? null, resolution_mode: reply === null ? null : 'user_reply',
    asked_at: '2025-01-01T00:00:00.000Z', replied_at: reply === null ? null : '2025-01-01T00:01:00.000Z', idempotency_key: reply?.key ?? null,
  };
}

const history = [round(1, 'open_text', { response: { text: 'first' }, key: 'k1' }), round(2, 'open_text')];

function code(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    return error instanceof SkilldError ? error.code : `not a SkilldError: ${String(error)}`;
  }
}

t.test('a reply to the pending round is taken; a retry of a stored one is a repeat', async (t) => {
  t.equal(checkReplyRequest(waiting, history, { job_id: 'job-1', interaction_id: 2, response: { text: 'second' } }), 'accept');
  t.equal(checkReplyRequest(waiting, history, { job_id: 'job-1', interaction_id: 1, response: { text: 'first' }, idempotency_key: 'k1' }), 'repeat');
  t.equal(checkReplyRequest({ ...waiting, status: 'succeeded' }, history, { job_id: 'job-1', interaction_id: 1, response: { text: 'first' }, idempotency_key: 'k1' }), 'repeat', 'even once the job is over');
});

t.test('refusals, each with its code', async (t) => {
  const reply = { job_id: 'job-1', interaction_id: 2, response: { text: 'x' } };
  t.equal(code(() => checkReplyRequest({ ...waiting, execution_mode: 'auto' }, [], reply)), 'JOB_NOT_INTERACTIVE');
  t.equal(code(() => checkReplyRequest({ ...waiting, status: 'running' }, history, reply)), 'JOB_NOT_WAITING');
  t.equal(code(() => checkReplyRequest(waiting, history, { ...reply, interaction_id: 1 })), 'INTERACTION_STALE');
  t.equal(code(() => checkReplyRequest(waiting, history, { ...reply, idempotency_key: 'k1' })), 'IDEMPOTENCY_CONFLICT', 'a key reused with another response');
  t.equal(code(() => checkReplyRequest(waiting, [history[0] as Interaction, round(2, 'approval')], reply)), 'INVALID_PARAMS', 'an approval takes allow or deny');
  t.equal(checkReplyRequest(waiting, [history[0] as Interaction, round(2, 'approval')], { ...reply, response: 'allow' }), 'accept');
});
