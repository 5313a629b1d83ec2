import t from 'tap';
import { SkilldError } from '../../rpc/errors.js';
import { approvalPending, checkApprovalReply, checkApprovals, decisionOf } from '../../daemon/jobs/approvals.js';
import { nextInteractionId, type Interaction } from '../../daemon/model/interactions.js';
import type { Job } from '../../daemon/model/job.js';

function job(patch: Partial<Job>): Job {
  return {
    job_id: 'job-1', skill_id: 'echo', skill_version: '1.0.0', engine: 'codex', execution_mode: 'interactive', status: 'queued',
    interactive_require_user_reply: true, session_timeout_sec: 60, hard_timeout_sec: 60, model: null, approvals: 'ask',
    interactive_profile: { kind: 'sticky_process', reason: 'test' }, attempt: 0, max_attempt: null, pending_interaction_id: null,
    wait_deadline_at: null, session_handle: null, warnings: [], error: null, created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z', started_at: null, finished_at: null, ...patch,
  };
}

function refusal(fn: () => void): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof SkilldError && error.code === 'INVALID_PARAMS') return error.message;
    throw error;
  }
  return 'accepted';
}

t.test('approvals "ask" is accepted only where a live session can ask', async (t) => {
  t.equal(refusal(() => checkApprovals(job({}))), 'accepted', 'interactive, sticky, an engine with a live protocol');
  t.equal(refusal(() => checkApprovals(job({ approvals: 'auto', execution_mode: 'auto', interactive_profile: null }))), 'accepted', 'auto asks nothing');
  const { approvals: _dropped, ...older } = job({ execution_mode: 'auto', interactive_profile: null });
  t.equal(refusal(() => checkApprovals(older)), 'accepted', 'a record without the field is auto');
  t.match(refusal(() => checkApprovals(job({ execution_mode: 'auto', interactive_profile: null }))), /an auto job never waits for a person/);
  t.match(refusal(() => checkApprovals(job({ engine: 'gemini', interactive_profile: { kind: 'resumable', reason: 'probe' } }))), /gemini runs this job as resumable, not in a live session/);
});

t.test('a permission request becomes a yes/no question; only "allow" allows', async (t) => {
  const pending = approvalPending(3, { id: 'call_1', kind: 'file_change', summary: 'change files: a.txt', detail: { itemId: 'call_1' } });
  t.same(pending, {
    interaction_id: 3,
    prompt: 'Allow the agent to change files: a.txt?',
    kind: 'approval',
    options: [{ label: 'allow', value: 'allow' }, { label: 'deny', value: 'deny' }],
    ui_hints: { approval: { kind: 'file_change', summary: 'change files: a.txt' } },
    context: { request: { itemId: 'call_1' } },
  });
  t.equal(refusal(() => checkApprovalReply('allow')), 'accepted');
  t.equal(refusal(() => checkApprovalReply('deny')), 'accepted');
  for (const bad of ['yes', 'Allow', true, 1, null, { decision: 'allow' }]) t.match(refusal(() => checkApprovalReply(bad)), /"allow" or "deny"/, JSON.stringify(bad));
  t.equal(decisionOf('allow'), 'allow');
  t.equal(decisionOf({ source: 'auto_decide_timeout' }), 'deny', 'the auto-decision denies');
});

t.test('interaction ids stay monotonic when approvals come within a turn', async (t) => {
  const round = (id: number): Interaction => ({ interaction_id: id, prompt: 'p', kind: 'approval', response: 'allow', resolution_mode: 'user_reply', asked_at: 'x', replied_at: 'y', idempotency_key: null });
  t.equal(nextInteractionId([], 1), 1, 'a first question is its attempt');
  t.equal(nextInteractionId([round(1)], 1), 2, 'after an approval of the same attempt');
  t.equal(nextInteractionId([round(1), round(2)], 5), 5, 'never below the attempt');
});
