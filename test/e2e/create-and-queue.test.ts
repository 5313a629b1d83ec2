import t from 'tap';
import { hostname } from 'node:os';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';

const daemon = await TestDaemon.start({ config: { max_concurrent: 1, max_queue: 2, kill_grace_ms: 200 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function createError(c: RpcClient, params: Record<string, unknown>): Promise<RpcCallError> {
  try {
    await c.request('jobs/create', params);
  } catch (error) {
    if (error instanceof RpcCallError) return error;
    throw error;
  }
  throw new Error('jobs/create was accepted');
}

t.test('API-1 no execution_mode means auto, and the auto job behaves as before', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', input: { emit: { greeting: 'x' } } });
  t.equal(job.execution_mode, 'auto');
  t.equal(job.interactive_profile, null);
  t.equal((await waitForStatus(client, job.job_id)).status, 'succeeded');
  t.match(await client.request('jobs/get', { job_id: job.job_id }), { host: hostname() }, 'the host that holds it: this daemon (its host_id)');
  t.notOk('host' in job, 'jobs/create answers the job as stored');
});

t.test('API-5 a mode listed in execution_modes is accepted', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'auto', input: {} });
  t.equal(job.execution_mode, 'auto');
  await waitForStatus(client, job.job_id);
});

t.test('API-2 execution_mode interactive is accepted for a skill that lists it', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'iflow', execution_mode: 'interactive', input: { emit: { greeting: 'i' } } });
  t.equal(job.execution_mode, 'interactive');
  t.equal(job.status, 'queued');
  t.match(job['interactive_profile'], { kind: 'resumable' });
  t.equal((await waitForStatus(client, job.job_id)).status, 'succeeded');
});

t.test('API-6 a mode the skill does not list gets SKILL_EXECUTION_MODE_UNSUPPORTED', async (t) => {
  const error = await createError(client, { skill_id: 'echo-auto', engine: 'codex', execution_mode: 'interactive' });
  t.equal(error.dataCode, 'SKILL_EXECUTION_MODE_UNSUPPORTED');
  t.same(error.details, { execution_modes: ['auto'] });
});

t.test('API-12 an engine in effective_engines is accepted', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'codex-only', engine: 'codex', input: {} });
  t.equal(job.engine, 'codex');
  await waitForStatus(client, job.job_id);
  const skill = await client.request<{ effective_engines: string[] }>('skills/get', { skill_id: 'no-gemini' });
  t.same(skill.effective_engines, ['codex', 'iflow', 'claude']);
});

t.test('API-13 an engine in unsupported_engines gets SKILL_ENGINE_UNSUPPORTED', async (t) => {
  t.equal((await createError(client, { skill_id: 'no-gemini', engine: 'gemini' })).dataCode, 'SKILL_ENGINE_UNSUPPORTED');
});

t.test('API-14 an engine missing from a declared engines list gets SKILL_ENGINE_UNSUPPORTED', async (t) => {
  t.equal((await createError(client, { skill_id: 'codex-only', engine: 'iflow' })).dataCode, 'SKILL_ENGINE_UNSUPPORTED');
});

t.test('create-time errors: SKILL_NOT_FOUND, ENGINE_UNKNOWN, INPUT_INVALID with the schema errors', async (t) => {
  t.equal((await createError(client, { skill_id: 'no-such-skill', engine: 'codex' })).dataCode, 'SKILL_NOT_FOUND');
  t.equal((await createError(client, { skill_id: 'echo-auto', engine: 'aider' })).dataCode, 'ENGINE_UNKNOWN');
  const invalid = await createError(client, { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 7, surprise: true } });
  t.equal(invalid.dataCode, 'INPUT_INVALID');
  t.match(invalid.details, { input: [{ path: String, message: String }], parameter: [] });
  const listed = await client.request<{ jobs: JobView[] }>('jobs/list', {});
  t.notOk(listed.jobs.some((j) => j.skill_id === 'no-such-skill'), 'a refused request stores nothing');
});

t.test('jobs are queued FIFO under max_concurrent; QUEUE_FULL past max_queue; slots never leak', async (t) => {
  const hang = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang' } });
  await waitForStatus(client, hang.job_id, ['running']);
  const first = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: { emit: { greeting: '1' } } });
  const second = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'iflow', input: { emit: { greeting: '2' } } });
  t.equal(first.status, 'queued');
  let status = await client.request<{ slots: { max: number; used: number; queued: number } }>('daemon/status');
  t.same(status.slots, { max: 1, used: 1, queued: 2 });
  const full = await createError(client, { skill_id: 'echo-auto', engine: 'codex' });
  t.equal(full.dataCode, 'QUEUE_FULL');
  // Cancel a queued job: it leaves the queue without ever running.
  await client.request('jobs/cancel', { job_id: second.job_id });
  t.equal((await client.request<JobView>('jobs/get', { job_id: second.job_id })).started_at, null);
  await client.request('jobs/cancel', { job_id: hang.job_id });
  const done = await waitForStatus(client, first.job_id);
  t.equal(done.status, 'succeeded', 'the queued job ran once the slot was free');
  status = await client.request('daemon/status');
  t.same(status.slots, { max: 1, used: 0, queued: 0 });
});

t.test('jobs/list pages newest first and filters', async (t) => {
  const page = await client.request<{ jobs: JobView[]; next: string | null }>('jobs/list', { limit: 2 });
  t.equal(page.jobs.length, 2);
  t.ok(page.next);
  const rest = await client.request<{ jobs: JobView[] }>('jobs/list', { limit: 100, before: page.next });
  t.notOk(rest.jobs.some((j) => page.jobs.some((p) => p.job_id === j.job_id)), 'pages do not overlap');
  const canceled = await client.request<{ jobs: JobView[] }>('jobs/list', { status: 'canceled' });
  t.ok(canceled.jobs.length >= 2 && canceled.jobs.every((j) => j.status === 'canceled'));
  const missing = await client.request('jobs/list', { before: 'job-nope' }).catch((e: RpcCallError) => e.dataCode);
  t.equal(missing, 'JOB_NOT_FOUND');
  for (const method of ['jobs/history', 'jobs/subscribe']) {
    const unknown = await client.request(method, { job_id: 'job-nope' }).catch((e: RpcCallError) => e.dataCode);
    t.equal(unknown, 'JOB_NOT_FOUND', `${method} names an unknown job`);
  }
  const finished = canceled.jobs[0]?.job_id as string;
  t.same(await client.request('jobs/history', { job_id: finished }), { job_id: finished, interactions: [], next: null }, 'a finished job is found without reading it');
});

t.test('job/event seq is gap-free and after_seq replays from the log', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'events' } } });
  await waitForStatus(client, job.job_id);
  const replayer = await daemon.client();
  const events: Array<{ seq: number; type: string; data: Record<string, unknown> }> = [];
  const finished = new Promise<void>((resolve) =>
    replayer.on('job/event', (params) => {
      const event = params as { seq: number; type: string; data: Record<string, unknown> };
      events.push(event);
      if (event.type === 'finished') resolve();
    }),
  );
  await replayer.request('jobs/subscribe', { job_id: job.job_id, after_seq: 0 });
  await finished;
  t.same(events.map((e) => e.seq), events.map((_, i) => i + 1), 'seq runs 1, 2, 3… without gaps');
  t.match(events[0], { job_id: job.job_id, seq: 1, ts: /^\d{4}-\d\d-\d\dT/, type: 'status_changed', data: { from: null, to: 'queued' } });
  t.ok(events.some((e) => e.type === 'output' && e.data['stream'] === 'stdout'), 'engine output is an event');
  t.match(events[events.length - 1], { type: 'finished', data: { status: 'succeeded', error: null } });
  const total = events.length;
  const tail: number[] = [];
  const tailDone = new Promise<void>((resolve) =>
    replayer.on('job/event', (params) => {
      const event = params as { seq: number };
      tail.push(event.seq);
      if (event.seq === total) resolve();
    }),
  );
  await replayer.request('jobs/subscribe', { job_id: job.job_id, after_seq: total - 2 });
  await tailDone;
  t.same(tail, [total - 1, total], 'after_seq replays only later events');
});
