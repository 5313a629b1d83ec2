import t from 'tap';
import { rescueOf } from '../../daemon/jobs/sticky-rescue.js';
import type { Job } from '../../daemon/model/job.js';

const waiting: Job = {
  job_id: 'job-1', skill_id: 'echo', skill_version: '1.0.0', engine: 'gemini', execution_mode: 'interactive', status: 'waiting_user',
  interactive_require_user_reply: true, session_timeout_sec: 60, hard_timeout_sec: 60, model: null, approvals: 'auto',
  interactive_profile: { kind: 'sticky_process', reason: 'configured' }, attempt: 1, max_attempt: null, pending_interaction_id: 1,
  wait_deadline_at: '2026-01-01T00:01:00.000Z', session_handle: { engine: 'gemini', handle_type: 'session_id', handle_value: 'abc-1' },
  warnings: ['OUTPUT_REPAIRED'], error: null, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', started_at: '2026-01-01T00:00:00Z', finished_at: null,
};

t.test('a rescued job becomes resumable, says why, and keeps a deadline only when it is not strict', async (t) => {
  t.same(rescueOf(waiting, 'open_text', 'was killed by SIGKILL'), {
    patch: {
      interactive_profile: { kind: 'resumable', reason: 'sticky_recovery "resume": the live engine process was killed by SIGKILL; each reply resumes session abc-1 in a new process' },
      wait_deadline_at: null,
      warnings: ['OUTPUT_REPAIRED', 'INTERACTION_PROCESS_RESCUED'],
    },
  });
  t.match(rescueOf({ ...waiting, interactive_require_user_reply: false }, 'choose_one', 'is gone'), { patch: { wait_deadline_at: '2026-01-01T00:01:00.000Z' } });
});

t.test('no session to resume, or an approval in flight: no rescue, and the reason', async (t) => {
  t.same(rescueOf({ ...waiting, session_handle: null }, 'open_text', 'is gone'), { reason: 'no session id is stored to resume' });
  t.match(rescueOf(waiting, 'approval', 'is gone'), { reason: /waited for an approval/ });
});
