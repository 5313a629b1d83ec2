// Slots and the resumable profile through the real daemon with max_concurrent 1
// (LC-3, LC-4, cancel, "a slot is never leaked"). Tests run one after the other: they count slots.
import t from 'tap';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RELEASE_FILE, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';

interface Job extends JobView {
  attempt: number;
  pending_interaction_id: number | null;
  session_handle: { handle_value: string } | null;
}
interface JobEvent {
  job_id: string;
  seq: number;
  ts: string;
  type: string;
  data: Record<string, unknown>;
}
interface Slots {
  max: number;
  used: number;
  queued: number;
}

const daemon = await TestDaemon.start({ config: { max_concurrent: 1, kill_grace_ms: 500 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

/**
 * Every job event of the daemon in emission order (one subscription, no job filter), and the
 * slot counts read from daemon/status right after each status change.
 */
const allEvents: JobEvent[] = [];
const slotSamples: Array<Promise<Slots>> = [];
const onEvent = new Set<() => void>();
{
  const watcher = await daemon.client();
  const sampler = await daemon.client();
  watcher.on('job/event', (params) => {
    const event = params as JobEvent;
    allEvents.push(event);
    if (event.type === 'status_changed') slotSamples.push(sampler.request<{ slots: Slots }>('daemon/status').then((s) => s.slots));
    for (const wake of onEvent) wake();
  });
  await watcher.request('jobs/subscribe', {});
}

async function slots(): Promise<Slots> {
  return (await client.request<{ slots: Slots }>('daemon/status')).slots;
}
async function get(jobId: string): Promise<Job> {
  return client.request<Job>('jobs/get', { job_id: jobId });
}
function statusesOf(jobId: string): string[] {
  return allEvents.filter((e) => e.job_id === jobId && e.type === 'status_changed').map((e) => String(e.data['to']));
}
function findIndex(jobId: string, to: string, nth: number): number {
  let seen = 0;
  return allEvents.findIndex((e) => e.job_id === jobId && e.type === 'status_changed' && e.data['to'] === to && ++seen === nth);
}
/**
 * When the nth status change of a job to `to` happened (its event's time), once it has arrived.
 * Causal order is compared by these times: a store may deliver two jobs' events in either order.
 */
async function changedAt(jobId: string, to: string, nth = 1): Promise<number> {
  return Date.parse((allEvents[await indexOf(jobId, to, nth)] as JobEvent).ts);
}
/** Position of the nth status change of a job to `to` in the daemon-wide event order (waits for it to arrive). */
async function indexOf(jobId: string, to: string, nth = 1): Promise<number> {
  for (;;) {
    const found = findIndex(jobId, to, nth);
    if (found >= 0) return found;
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        onEvent.delete(wake);
        resolve();
      };
      onEvent.add(wake);
    });
  }
}
async function interactive(engine: string, input: Record<string, unknown>): Promise<Job> {
  return client.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input });
}
async function hanging(engine: string): Promise<Job> {
  return client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario: 'hang' } });
}
async function untilWaiting(jobId: string): Promise<Job> {
  return (await waitForStatus(client, jobId, ['waiting_user', 'succeeded', 'failed', 'canceled'])) as Job;
}
const IDLE: Slots = { max: 1, used: 0, queued: 0 };

t.test('LC-3 a resumable job entering waiting_user releases its slot; a queued job starts and runs while the first waits; slots.used is 0 while only waiting jobs remain', async (t) => {
  // The first turn goes on only once released, so that the second job is certainly queued behind it.
  const a = await interactive('codex', { scenario: 'ask', release_file: RELEASE_FILE });
  const b = await hanging('gemini');
  t.equal(b.status, 'queued', 'B queues behind A');
  t.same(await slots(), { max: 1, used: 1, queued: 1 }, 'A holds the only slot, B waits for it');
  await daemon.enginePid(a.job_id); // its workspace is made
  await writeFile(join(daemon.runDir(a.job_id), 'workspace', RELEASE_FILE), '');

  await waitForStatus(client, b.job_id, ['running']);
  t.equal((await get(a.job_id)).status, 'waiting_user', 'B runs while A waits');
  t.ok((await changedAt(a.job_id, 'waiting_user')) <= (await changedAt(b.job_id, 'running')), 'B started only after A entered waiting_user');
  t.same(await slots(), { max: 1, used: 1, queued: 0 }, 'the only slot is B\'s');

  await client.request('jobs/cancel', { job_id: b.job_id });
  t.same(await slots(), IDLE, 'slots.used is 0 with only a waiting job left');
  const status = await client.request<{ jobs: Record<string, number> }>('daemon/status');
  t.equal(status.jobs['waiting_user'], 1, 'the waiting job is counted as waiting_user');
  t.equal((await get(a.job_id)).status, 'waiting_user', 'A still waits, with no slot');
  await client.request('jobs/cancel', { job_id: a.job_id });
});

t.test('LC-4 after the reply the resumable job goes waiting_user -> queued -> running; with the slot taken it stays queued, without overcommit, until the slot frees', async (t) => {
  const c = await interactive('gemini', { scenario: 'ask', emit: { greeting: 'resumed' } });
  t.equal((await untilWaiting(c.job_id)).status, 'waiting_user');
  const d = await hanging('iflow');
  await waitForStatus(client, d.job_id, ['running']);
  t.same(await slots(), { max: 1, used: 1, queued: 0 }, 'the hanging job holds the slot');

  const answer = await client.request<{ status: string }>('jobs/reply', { job_id: c.job_id, interaction_id: 1, response: 'Rome' });
  t.equal(answer.status, 'queued', 'the accepted reply queues the job');
  t.equal((await get(c.job_id)).status, 'queued', 'it is queued, not running');
  t.same(await slots(), { max: 1, used: 1, queued: 1 }, 'it waits for a slot: no overcommit');
  t.equal((await daemon.engineCalls(c.job_id)).length, 1, 'no resume process started yet');

  await client.request('jobs/cancel', { job_id: d.job_id });
  const done = await waitForStatus(client, c.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  await indexOf(c.job_id, 'succeeded');
  t.same(statusesOf(c.job_id), ['queued', 'running', 'waiting_user', 'queued', 'running', 'succeeded'], 'status_changed sequence');
  t.ok((await changedAt(d.job_id, 'canceled')) <= (await changedAt(c.job_id, 'running', 2)), 'the resumed turn started only after the slot was freed');
  t.equal((await daemon.engineCalls(c.job_id)).length, 2, 'one resume turn');
  t.same(await slots(), IDLE, 'slot free after success');
});

t.test('LC-8 jobs/cancel of a waiting job: canceled with CANCELED_BY_USER, slots stay at 0', async (t) => {
  const job = await interactive('iflow', { scenario: 'ask_plain' });
  t.equal((await untilWaiting(job.job_id)).status, 'waiting_user');
  t.same(await slots(), IDLE, 'a waiting resumable job holds no slot');
  const answer = await client.request('jobs/cancel', { job_id: job.job_id });
  t.same(answer, { job_id: job.job_id, status: 'canceled', accepted: true });
  const after = await get(job.job_id);
  t.equal(after.status, 'canceled');
  t.equal(after.error?.code, 'CANCELED_BY_USER');
  t.match(await client.request('jobs/result', { job_id: job.job_id }), { status: 'canceled', output: null, error: { code: 'CANCELED_BY_USER' } });
  t.match(await client.request('jobs/pending', { job_id: job.job_id }), { status: 'canceled', pending: null }, 'no pending once canceled');
  t.same(await slots(), IDLE, 'slots unchanged at 0');
  t.equal((await daemon.engineCalls(job.job_id)).length, 1, 'canceling started no turn');
  await indexOf(job.job_id, 'canceled');
  t.same(statusesOf(job.job_id), ['queued', 'running', 'waiting_user', 'canceled']);
});

t.test('LC-14 PR-14 LC-4 slots return to 0 after an interactive failure, a resume failure, a cancel while queued to resume and a cancel while running', async (t) => {
  const failing = await interactive('codex', { scenario: 'marker_invalid' });
  t.equal((await waitForStatus(client, failing.job_id)).error?.code, 'OUTPUT_INVALID');
  t.same(await slots(), IDLE, 'after a failed turn');

  const lost = await interactive('gemini', { scenario: 'ask' });
  const waiting = await untilWaiting(lost.job_id);
  await rm(join(daemon.runDir(lost.job_id), 'workspace', '.fake-engine', 'sessions', `${waiting.session_handle?.handle_value ?? ''}.json`));
  await client.request('jobs/reply', { job_id: lost.job_id, interaction_id: 1, response: 'Rome' });
  t.equal((await waitForStatus(client, lost.job_id)).error?.code, 'SESSION_RESUME_FAILED');
  t.same(await slots(), IDLE, 'after a resume failure');

  const resumed = await interactive('codex', { scenario: 'ask' });
  t.equal((await untilWaiting(resumed.job_id)).status, 'waiting_user');
  const blocker = await hanging('gemini');
  await waitForStatus(client, blocker.job_id, ['running']);
  t.match(await client.request('jobs/reply', { job_id: resumed.job_id, interaction_id: 1, response: 'Rome' }), { status: 'queued' });
  t.same(await slots(), { max: 1, used: 1, queued: 1 }, 'the resumed job waits for the slot');
  t.match(await client.request('jobs/cancel', { job_id: resumed.job_id }), { status: 'canceled', accepted: true }, 'cancel while queued for the resume');
  t.same(await slots(), { max: 1, used: 1, queued: 0 }, 'its slot request is withdrawn');
  await client.request('jobs/cancel', { job_id: blocker.job_id });
  t.same(await slots(), IDLE, 'after canceling a job queued for its resume');
  t.equal((await daemon.engineCalls(resumed.job_id)).length, 1, 'the canceled resume never started a process');

  const running = await interactive('iflow', { scenario: 'hang' });
  await waitForStatus(client, running.job_id, ['running']);
  t.same(await slots(), { max: 1, used: 1, queued: 0 }, 'a running interactive job holds the slot');
  t.match(await client.request('jobs/cancel', { job_id: running.job_id }), { status: 'canceled', accepted: true });
  t.same(await slots(), IDLE, 'after a cancel while running');
});

t.test('LC-3 LC-4 slots.used never exceeded max_concurrent at any status change in this file', async (t) => {
  const samples = await Promise.all(slotSamples);
  t.ok(samples.length >= 20, `sampled ${samples.length} status changes`);
  t.ok(samples.every((s) => s.used <= 1), `max used ${Math.max(...samples.map((s) => s.used))}`);
  t.same(await slots(), IDLE);
});
