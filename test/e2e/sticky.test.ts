import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_NAMES, FIXTURES, TestDaemon, alive, processOf, waitForFile, waitForStatus, waitUntilRemoved, type JobView } from '../helpers/daemon.js';

// The fakes fail the resume probe with FAKE_ENGINE_NO_RESUME; sticky jobs then run in their protocol modes.
const stickyEnv = { FAKE_ENGINE_NO_RESUME: '1' };
const engines = Object.fromEntries(ENGINE_NAMES.map((n) => [n, { command: [join(FIXTURES, `fake-${n}.mjs`)], env: stickyEnv }]));
const daemon = await TestDaemon.start({ config: { max_concurrent: 2, kill_grace_ms: 300, engines } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function waitingJob(engine: string, extra: Record<string, unknown> = {}, scenario = 'ask'): Promise<{ job: JobView; pid: number }> {
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario, emit: { greeting: 'g' } }, ...extra });
  const job = await waitForStatus(client, created.job_id, ['waiting_user']);
  const pid = await daemon.enginePid(job.job_id);
  return { job, pid };
}

t.test('PR-2 a failed resume probe gives sticky_process, and interactive jobs are still accepted', async (t) => {
  const { engines: list } = await client.request<{ engines: Array<{ name: string; interactive_profile: { kind: string; reason: string } }> }>('engines/list');
  for (const engine of list) {
    t.equal(engine.interactive_profile.kind, 'sticky_process', engine.name);
    t.match(engine.interactive_profile.reason, /resume probe failed/);
  }
  const { job } = await waitingJob('codex');
  t.match(job, { interactive_profile: { kind: 'sticky_process' }, status: 'waiting_user' });
  await client.request('jobs/cancel', { job_id: job.job_id });
});

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: LC-5 PR-11 PR-12 a sticky job waits with its slot and live process; the reply reaches that same process`, async (t) => {
    const before = Date.now();
    const { job, pid } = await waitingJob(engine, { session_timeout_sec: 600 });
    t.ok(alive(pid), 'LC-5 the engine process stays resident while waiting');
    const input = join(daemon.stateDir, 'runs', job.job_id, 'engine', 'stdin');
    t.ok(existsSync(input), 'the live input is a FIFO in the run folder');
    t.match(await client.request('daemon/status'), { slots: { used: 1 } }, 'LC-5 the slot is kept');
    const deadline = Date.parse(job['wait_deadline_at'] as string);
    t.ok(deadline >= before + 600_000 && deadline <= Date.now() + 600_000, 'PR-11 wait_deadline_at = now + session_timeout_sec');
    await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'Paris' });
    const done = await waitForStatus(client, job.job_id);
    t.equal(done.status, 'succeeded');
    t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'g', reply: 'Paris' } });
    const calls = await daemon.engineCalls(job.job_id);
    t.equal(calls.length, 2);
    t.equal(new Set(calls.map(processOf)).size, 1, 'PR-12 both turns ran in the same process');
    t.equal(calls[1]?.prompt, 'Paris', 'the reply is the next turn');
    t.match(await client.request('daemon/status'), { slots: { used: 0 } });
    await waitUntilRemoved(input);
    t.pass('the FIFO goes with its process: the run folder holds regular files only');
  });
}

t.test('LC-6 LC-9 PR-13 a strict sticky wait past session_timeout_sec kills the process and fails INTERACTION_WAIT_TIMEOUT', async (t) => {
  // Long enough to be seen waiting, with its process, on a busy machine before the deadline passes.
  const { job, pid } = await waitingJob('gemini', { session_timeout_sec: 3 });
  t.equal(job['interactive_require_user_reply'], true);
  const failed = await waitForStatus(client, job.job_id);
  t.match(failed, { status: 'failed', error: { code: 'INTERACTION_WAIT_TIMEOUT' } });
  t.notOk(alive(pid), 'the process was stopped');
  const late = await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'too late' }).catch((e: { dataCode: string }) => e.dataCode);
  t.equal(late, 'JOB_NOT_WAITING', 'a reply after the deadline is refused cleanly');
  t.match(await client.request('daemon/status'), { slots: { used: 0 } });
});

t.test('LC-11 API-11 a non-strict sticky wait past its deadline writes the auto-decide instruction to the live process', async (t) => {
  const { job, pid } = await waitingJob('iflow', { session_timeout_sec: 3, interactive_require_user_reply: false });
  const done = await waitForStatus(client, job.job_id);
  t.equal(done.status, 'succeeded');
  const calls = await daemon.engineCalls(job.job_id);
  t.equal(calls.length, 2);
  t.equal(new Set(calls.map(processOf)).size, 1, 'the same process continued');
  t.same(JSON.parse(calls[1]?.prompt ?? '{}'), { source: 'auto_decide_timeout', interaction_id: 1, instruction: 'The user did not reply in time. Continue with your best judgement based on the current context.' });
  t.match(await client.request('jobs/history', { job_id: job.job_id }), { interactions: [{ interaction_id: 1, resolution_mode: 'auto_decide_timeout', replied_at: String }] });
});

t.test('PR-18 a sticky process that dies while its job waits fails the job with INTERACTION_PROCESS_LOST at once', async (t) => {
  const { job, pid } = await waitingJob('codex', { session_timeout_sec: 600 });
  process.kill(pid, 'SIGKILL');
  const failed = await waitForStatus(client, job.job_id);
  t.match(failed, { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST' } });
  t.match(await client.request('daemon/status'), { slots: { used: 0 } }, 'its slot is released');
  t.notOk(existsSync(join(daemon.stateDir, 'runs', job.job_id, 'engine', 'stdin')), 'the FIFO of a lost process is removed');
});

t.test('cancel of a waiting sticky job stops its process and frees the slot', async (t) => {
  const { job, pid } = await waitingJob('gemini');
  t.match(await client.request('jobs/cancel', { job_id: job.job_id }), { status: 'canceled', accepted: true });
  t.notOk(alive(pid));
  t.match(await client.request('daemon/status'), { slots: { used: 0 } });
});

t.test('two sticky jobs waiting hold both slots; a third job queues until one ends', async (t) => {
  const a = await waitingJob('codex');
  const b = await waitingJob('iflow');
  const queued = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: { emit: { greeting: 'later' } } });
  t.match(await client.request('daemon/status'), { slots: { used: 2, queued: 1 } });
  await client.request('jobs/reply', { job_id: a.job.job_id, interaction_id: 1, response: 'done' });
  t.equal((await waitForStatus(client, queued.job_id)).status, 'succeeded');
  await client.request('jobs/cancel', { job_id: b.job.job_id });
  t.match(await client.request('daemon/status'), { slots: { used: 0, queued: 0 } });
});

t.test('a finished sticky job keeps its slot until its live process is gone', async (t) => {
  // One slot, and a live process that ends only at the grace period's kill: the queued job may
  // start only once it is gone, so no moment has more engines than slots.
  const slow = { command: [join(FIXTURES, 'fake-gemini.mjs')], env: { ...stickyEnv, FAKE_ENGINE_IGNORE_SIGTERM: '1' } };
  const single = await TestDaemon.start({ config: { max_concurrent: 1, kill_grace_ms: 1000, engines: { ...engines, gemini: slow } } });
  t.teardown(() => single.cleanup());
  const own = await single.client();
  const created = await own.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(own, created.job_id, ['waiting_user']);
  const pid = await single.enginePid(created.job_id);
  const next = await own.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'after' } } });
  t.match(await own.request('daemon/status'), { slots: { used: 1, queued: 1 } });
  await own.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'done' });
  t.equal((await waitForStatus(own, created.job_id)).status, 'succeeded');
  t.equal((await waitForStatus(own, next.job_id, ['running', 'succeeded'])).job_id, next.job_id);
  t.notOk(alive(pid), 'the finished job\'s process was gone before the next job started');
  t.equal((await waitForStatus(own, next.job_id)).status, 'succeeded');
});

t.test('a live session takes a first prompt of any size: it is a message of the protocol', async (t) => {
  const greeting = 'g'.repeat(200_000);
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting } } });
  await waitForStatus(client, created.job_id, ['waiting_user']);
  await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Paris' });
  t.equal((await waitForStatus(client, created.job_id)).status, 'succeeded');
  t.match(await client.request('jobs/result', { job_id: created.job_id }), { output: { greeting, reply: 'Paris' } });
});

t.test('a sticky reply over the argument limit reaches the live process whole', async (t) => {
  const reply = `--${'r'.repeat(300_000)}`;
  const { job, pid } = await waitingJob('iflow');
  await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: reply });
  t.equal((await waitForStatus(client, job.job_id)).status, 'succeeded');
  const calls = await daemon.engineCalls(job.job_id);
  t.equal(calls.length, 2);
  t.equal(new Set(calls.map(processOf)).size, 1);
  t.ok(calls[1]?.prompt === reply, 'the whole reply');
});
