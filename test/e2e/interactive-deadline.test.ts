// Wait deadlines of the resumable profile and restart recovery of waiting jobs, through the real
// daemon (LC-8, LC-10, API-7, API-8, API-11, PR-3 across a restart).
// The only waits here are real deadlines (session_timeout_sec 1 or 2), observed through events.
import t from 'tap';
import type { RpcClient } from '../../rpc/client.js';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import type { InteractionView } from '../../clients/wire.js';

interface Job extends JobView {
  attempt: number;
  interactive_require_user_reply: boolean;
  session_timeout_sec: number;
  pending_interaction_id: number | null;
  wait_deadline_at: string | null;
  updated_at: string;
  session_handle: { engine: string; handle_type: string; handle_value: string } | null;
}
interface JobEvent {
  job_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

const INSTRUCTION = 'The user did not reply in time. Continue with your best judgement based on the current context.';

async function createInteractive(c: RpcClient, engine: string, extra: Record<string, unknown>): Promise<Job> {
  return c.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', ...extra });
}
async function untilWaiting(c: RpcClient, jobId: string): Promise<Job> {
  return (await waitForStatus(c, jobId, ['waiting_user', 'succeeded', 'failed', 'canceled'])) as Job;
}
async function historyOf(c: RpcClient, jobId: string): Promise<InteractionView[]> {
  return (await c.request<{ interactions: InteractionView[] }>('jobs/history', { job_id: jobId })).interactions;
}
/** Status changes of one job, replayed from seq 1 once it is terminal. */
async function statusTrail(daemon: TestDaemon, jobId: string): Promise<string[]> {
  return (await replayAll(daemon, jobId)).filter((e) => e.type === 'status_changed').map((e) => String(e.data['to']));
}
/** Every event of one job from seq 1 up to its `finished` event. */
async function replayAll(daemon: TestDaemon, jobId: string): Promise<JobEvent[]> {
  const c = await daemon.client();
  const events: JobEvent[] = [];
  const finished = new Promise<void>((resolve) => {
    c.on('job/event', (params) => {
      const event = params as JobEvent;
      if (event.job_id !== jobId) return;
      events.push(event);
      if (event.type === 'finished') resolve();
    });
  });
  await c.request('jobs/subscribe', { job_id: jobId, after_seq: 0 });
  await finished;
  c.close();
  return events;
}

// One daemon for the file; the last test restarts it on the same state dir once the others are
// done. The tests run side by side: most of their time is spent waiting for deadlines.
t.jobs = 3;
const beforeRestart: Array<Promise<unknown>> = [];
let daemon = await TestDaemon.start();
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

beforeRestart.push(t.test('API-7 LC-8 API-8 LC-10 API-11 strict by default waits with no deadline, even past session_timeout_sec; non-strict sends the auto-decide reply at its deadline and resumes', async (t) => {
  const strict = await createInteractive(client, 'codex', { session_timeout_sec: 1, input: { scenario: 'ask' } });
  t.equal(strict.interactive_require_user_reply, true, 'API-7 interactive_require_user_reply defaults to true');
  const strictWaiting = await untilWaiting(client, strict.job_id);
  t.equal(strictWaiting.status, 'waiting_user');
  t.equal(strictWaiting.wait_deadline_at, null, 'LC-8 a strict resumable wait has no deadline');

  // The non-strict job starts after the strict one waits, so its deadline passes after the strict job's session_timeout_sec.
  // Its wait is long enough to be seen as waiting on a busy machine before its deadline passes.
  const lenient = await createInteractive(client, 'gemini', { session_timeout_sec: 3, interactive_require_user_reply: false, input: { scenario: 'ask', emit: { greeting: 'auto' } } });
  t.equal(lenient.interactive_require_user_reply, false, 'API-8 false is accepted and kept');
  const trail = statusTrail(daemon, lenient.job_id);
  const waiting = await untilWaiting(client, lenient.job_id);
  t.equal(waiting.status, 'waiting_user', 'the non-strict job waits first');
  const deadline = Date.parse(waiting.wait_deadline_at ?? '');
  const [asked] = await historyOf(client, lenient.job_id);
  t.equal(deadline - Date.parse(asked?.asked_at ?? ''), 3000, 'LC-10 wait_deadline_at = the moment the question was recorded + session_timeout_sec');
  t.ok(deadline > Date.parse(waiting.updated_at), 'the deadline lies ahead when waiting_user is entered');

  const done = (await waitForStatus(client, lenient.job_id)) as Job;
  t.equal(done.status, 'succeeded', `LC-10 the job resumed by itself and finished (${JSON.stringify(done.error)})`);
  t.equal(done.wait_deadline_at, null, 'no deadline once it stopped waiting');
  t.same(await trail, ['queued', 'running', 'waiting_user', 'queued', 'running', 'succeeded'], 'waiting_user -> queued -> running with no reply from anyone');
  const expected = { source: 'auto_decide_timeout', interaction_id: 1, instruction: INSTRUCTION };
  const [round] = await historyOf(client, lenient.job_id);
  t.match(round, { interaction_id: 1, prompt: 'Which city should I use?', kind: 'choose_one', resolution_mode: 'auto_decide_timeout' }, 'API-11 recorded as auto_decide_timeout');
  t.same(round?.response, expected, 'API-11 the response is the auto-decide object');
  t.ok(Date.parse(round?.replied_at ?? '') >= deadline, 'decided at the deadline, not before');
  const calls = await daemon.engineCalls(lenient.job_id);
  t.equal(calls.length, 2);
  t.match(calls[1], { resume: true, session: waiting.session_handle?.handle_value }, 'resumed in the stored session');
  t.same(JSON.parse(calls[1]?.prompt ?? 'null'), expected, 'the resumed turn got the auto-decide reply as JSON');
  t.equal(calls[1]?.prompt, JSON.stringify(expected));
  t.match(await client.request('jobs/result', { job_id: lenient.job_id }), { output: { greeting: 'auto', reply: JSON.stringify(expected) } });

  // The strict job's own session_timeout_sec has long passed: nothing happened to it.
  const strictNow = await client.request<Job>('jobs/get', { job_id: strict.job_id });
  t.equal(strictNow.status, 'waiting_user', 'LC-8 the strict job still waits');
  t.equal(strictNow.attempt, 1, 'LC-8 no automatic next turn');
  t.equal(strictNow.wait_deadline_at, null);
  t.equal((await daemon.engineCalls(strict.job_id)).length, 1, 'LC-8 no engine process was started');
  t.match(await historyOf(client, strict.job_id), [{ interaction_id: 1, response: null, resolution_mode: null, replied_at: null }], 'LC-8 no reply recorded');
  await client.request('jobs/reply', { job_id: strict.job_id, interaction_id: 1, response: 'Paris' });
  t.equal((await waitForStatus(client, strict.job_id)).status, 'succeeded', 'LC-8 a reply still resumes it');
}));

beforeRestart.push(t.test('LC-10 a non-strict wait answered before its deadline is a user reply, and the deadline does not fire afterwards', async (t) => {
  // Long enough for the reply to come first on a busy machine; round 2's deadline then passes.
  const job = await createInteractive(client, 'iflow', { session_timeout_sec: 5, interactive_require_user_reply: false, input: { scenario: 'ask_twice' } });
  const first = await untilWaiting(client, job.job_id);
  t.not(first.wait_deadline_at, null);
  await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'quick' });
  const second = await untilWaiting(client, job.job_id);
  t.equal(second.pending_interaction_id, 2, 'round 2 has its own deadline');
  t.ok(Date.parse(second.wait_deadline_at ?? '') > Date.parse(first.wait_deadline_at ?? ''));
  const done = await waitForStatus(client, job.job_id);
  t.equal(done.status, 'succeeded');
  const rounds = await historyOf(client, job.job_id);
  t.match(rounds, [
    { interaction_id: 1, response: 'quick', resolution_mode: 'user_reply' },
    { interaction_id: 2, response: { source: 'auto_decide_timeout', interaction_id: 2, instruction: INSTRUCTION }, resolution_mode: 'auto_decide_timeout' },
  ]);
  t.equal((await daemon.engineCalls(job.job_id)).length, 3, 'exactly one resume per round');
}));

t.test('PR-3 LC-8 LC-10 waiting resumable jobs across a daemon restart (SIGTERM, then a new daemon on the same state dir)', async (t) => {
  const first = daemon;
  const c1 = client;
  const strict = await createInteractive(c1, 'codex', { input: { scenario: 'ask', emit: { greeting: 'after restart' } } });
  const strictBefore = await untilWaiting(c1, strict.job_id);
  t.equal(strictBefore.status, 'waiting_user');
  const pendingBefore = await c1.request('jobs/pending', { job_id: strict.job_id });
  await Promise.all(beforeRestart);
  // Created last, so that its deadline is still ahead when the daemon stops.
  // Its deadline leaves the first daemon time to stop on a busy machine (coverage is written at exit).
  const lenient = await createInteractive(c1, 'iflow', { session_timeout_sec: 6, interactive_require_user_reply: false, input: { scenario: 'ask_plain' } });
  const lenientBefore = await untilWaiting(c1, lenient.job_id);
  t.equal(lenientBefore.status, 'waiting_user');
  t.equal(await first.stop(), 0, 'the first daemon stopped cleanly');
  const stoppedAt = Date.now();
  t.ok(stoppedAt < Date.parse(lenientBefore.wait_deadline_at ?? ''), 'the first daemon stopped before the non-strict deadline');

  const restarted = await TestDaemon.start({ dir: first.dir });
  daemon = restarted; // the file's teardown now stops this one and removes the folder
  const c2 = await restarted.client();

  t.test('PR-3 LC-8 a resumable waiting job survives a daemon restart with the same pending and handle, and a reply after the restart resumes it', async (t) => {
    const after = await c2.request<Job>('jobs/get', { job_id: strict.job_id });
    t.equal(after.status, 'waiting_user', 'still waiting');
    t.same(after.session_handle, strictBefore.session_handle, 'the persisted handle survived');
    t.equal(after.pending_interaction_id, 1);
    t.equal(after.wait_deadline_at, null);
    t.same(await c2.request('jobs/pending', { job_id: strict.job_id }), pendingBefore, 'the same pending');
    await c2.request('jobs/reply', { job_id: strict.job_id, interaction_id: 1, response: 'Rome' });
    const done = await waitForStatus(c2, strict.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    t.match(await c2.request('jobs/result', { job_id: strict.job_id }), { output: { greeting: 'after restart', reply: 'Rome' } });
    const calls = await restarted.engineCalls(strict.job_id);
    t.equal(calls.length, 2);
    t.match(calls[1], { resume: true, session: strictBefore.session_handle?.handle_value }, 'resumed with the handle stored before the restart');
    const events = await replayAll(restarted, strict.job_id);
    t.same(events.map((e) => e.seq), events.map((_, i) => i + 1), 'the event log continues across the restart without gaps');
    t.same(
      events.filter((e) => e.type === 'status_changed').map((e) => e.data['to']),
      ['queued', 'running', 'waiting_user', 'queued', 'running', 'succeeded'],
      'one status history across both daemons',
    );
  });

  t.test('LC-10 API-11 a non-strict deadline is re-armed after a restart and still fires', async (t) => {
    const done = await waitForStatus(c2, lenient.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const [round] = await historyOf(c2, lenient.job_id);
    t.equal(round?.resolution_mode, 'auto_decide_timeout');
    t.same(round?.response, { source: 'auto_decide_timeout', interaction_id: 1, instruction: INSTRUCTION });
    const repliedAt = Date.parse(round?.replied_at ?? '');
    t.ok(repliedAt > stoppedAt, 'decided by the restarted daemon');
    t.ok(repliedAt >= Date.parse(lenientBefore.wait_deadline_at ?? ''), 'not before the persisted deadline');
    const calls = await restarted.engineCalls(lenient.job_id);
    t.equal(calls.length, 2);
    t.match(calls[1], { resume: true, session: lenientBefore.session_handle?.handle_value });
    t.match(await c2.request('daemon/status'), { slots: { used: 0, queued: 0 } }, 'no slot held once both recovered jobs finished');
  });
});
