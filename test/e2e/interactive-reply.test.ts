// jobs/reply through the real daemon: its errors, idempotency, and the input_required event
// (SPEC §4, §7 "input_required is emitted from this persisted state", §8 "Reply").
import t from 'tap';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';

interface Job extends JobView {
  attempt: number;
  pending_interaction_id: number | null;
}
interface JobEvent {
  job_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** Every event of one job, from seq 1 on (replay, then live), on its own connection. */
class EventTrail {
  readonly #bySeq = new Map<number, JobEvent>();
  static async follow(daemon: TestDaemon, jobId: string): Promise<EventTrail> {
    const trail = new EventTrail();
    const c = await daemon.client();
    c.on('job/event', (params) => {
      const event = params as JobEvent;
      if (event.job_id === jobId) trail.#bySeq.set(event.seq, event);
    });
    await c.request('jobs/subscribe', { job_id: jobId, after_seq: 0 });
    return trail;
  }
  get events(): JobEvent[] {
    return [...this.#bySeq.values()].sort((a, b) => a.seq - b.seq);
  }
}

t.jobs = 3;
const daemon = await TestDaemon.start({ config: { max_concurrent: 8 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function createInteractive(c: RpcClient, input: Record<string, unknown>, engine = 'codex'): Promise<Job> {
  return c.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input });
}
async function untilWaiting(jobId: string): Promise<Job> {
  return (await waitForStatus(client, jobId, ['waiting_user', 'succeeded', 'failed', 'canceled'])) as Job;
}
/** The RPC error a request fails with (the test fails if it succeeds). */
async function rpcError(promise: Promise<unknown>): Promise<RpcCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcCallError) return error;
    throw error;
  }
  throw new Error('the request succeeded; an error was expected');
}
function reply(jobId: string, interactionId: number, response: unknown, idempotencyKey?: string): Promise<{ job_id: string; status: string; accepted: boolean }> {
  return client.request('jobs/reply', { job_id: jobId, interaction_id: interactionId, response, ...(idempotencyKey === undefined ? {} : { idempotency_key: idempotencyKey }) });
}

t.test('API-4 JOB_NOT_INTERACTIVE: an auto job takes no reply', async (t) => {
  const created = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: { scenario: 'ok' } });
  const error = await rpcError(reply(created.job_id, 1, 'hello'));
  t.equal(error.dataCode, 'JOB_NOT_INTERACTIVE');
  t.equal(error.rpcCode, 2002);
  t.equal((await waitForStatus(client, created.job_id)).status, 'succeeded', 'the job is not disturbed');
  t.equal((await rpcError(reply(created.job_id, 1, 'hello'))).dataCode, 'JOB_NOT_INTERACTIVE', 'also once finished');
});

t.test('API-4 JOB_NOT_WAITING: replying to a running or a finished interactive job', async (t) => {
  const running = await createInteractive(client, { scenario: 'hang' }, 'iflow');
  await waitForStatus(client, running.job_id, ['running']);
  const error = await rpcError(reply(running.job_id, 1, 'too early'));
  t.equal(error.dataCode, 'JOB_NOT_WAITING', 'running');
  t.equal(error.rpcCode, 2003);
  t.match(await client.request('jobs/pending', { job_id: running.job_id }), { status: 'running', pending: null });
  await client.request('jobs/cancel', { job_id: running.job_id });
  t.equal((await rpcError(reply(running.job_id, 1, 'too late'))).dataCode, 'JOB_NOT_WAITING', 'canceled');

  const finished = await createInteractive(client, { scenario: 'ok' }, 'gemini');
  t.equal((await waitForStatus(client, finished.job_id)).status, 'succeeded');
  t.equal((await rpcError(reply(finished.job_id, 1, 'too late'))).dataCode, 'JOB_NOT_WAITING', 'succeeded');
  t.equal((await daemon.engineCalls(finished.job_id)).length, 1, 'no turn was started by the refused reply');
});

t.test('API-4 INTERACTION_STALE: a wrong interaction_id is refused and the details name the pending one; idempotent retries never start a second turn; IDEMPOTENCY_CONFLICT on another response', async (t) => {
  const created = await createInteractive(client, { scenario: 'ask_twice' });
  const first = await untilWaiting(created.job_id);
  t.equal(first.pending_interaction_id, 1);

  const stale = await rpcError(reply(created.job_id, 2, 'from the future'));
  t.equal(stale.dataCode, 'INTERACTION_STALE');
  t.equal(stale.rpcCode, 2004);
  t.match(stale.details, { pending_interaction_id: 1 }, 'details carry the pending id');
  t.match(await client.request('jobs/get', { job_id: created.job_id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'a refused reply changes nothing');

  const accepted = await reply(created.job_id, 1, 'answer one', 'key-1');
  t.same(accepted, { job_id: created.job_id, status: 'queued', accepted: true }, 'first use of the key: accepted, the job queues to resume');
  const retried = await reply(created.job_id, 1, 'answer one', 'key-1');
  t.match(retried, { job_id: created.job_id, accepted: true }, 'the same key and response at once: accepted again');

  const second = await untilWaiting(created.job_id);
  t.equal(second.status, 'waiting_user');
  t.equal(second.pending_interaction_id, 2);
  t.equal((await daemon.engineCalls(created.job_id)).length, 2, 'one resume turn for the two deliveries');

  t.same(await reply(created.job_id, 1, 'answer one', 'key-1'), { job_id: created.job_id, status: 'waiting_user', accepted: true }, 'a late retry is still accepted');
  t.equal((await daemon.engineCalls(created.job_id)).length, 2, 'and starts no turn');
  t.match(await client.request('jobs/pending', { job_id: created.job_id }), { pending: { interaction_id: 2, prompt: 'Question 2?' } }, 'the pending round is untouched');

  const conflict = await rpcError(reply(created.job_id, 1, 'another answer', 'key-1'));
  t.equal(conflict.dataCode, 'IDEMPOTENCY_CONFLICT');
  t.equal(conflict.rpcCode, 2005);
  t.equal((await rpcError(reply(created.job_id, 2, 'another answer', 'key-1'))).dataCode, 'IDEMPOTENCY_CONFLICT', 'also when aimed at the current round');

  const old = await rpcError(reply(created.job_id, 1, 'answer one again'));
  t.equal(old.dataCode, 'INTERACTION_STALE', 'a reply to an answered round (without key) is stale');
  t.match(old.details, { pending_interaction_id: 2 });

  t.match(await reply(created.job_id, 2, { choice: 'b' }, 'key-2'), { accepted: true });
  t.equal((await waitForStatus(client, created.job_id)).status, 'succeeded');
  t.match(await reply(created.job_id, 2, { choice: 'b' }, 'key-2'), { status: 'succeeded', accepted: true }, 'a retry after the job finished is accepted');
  t.equal((await daemon.engineCalls(created.job_id)).length, 3, 'three turns in all');
  const history = await client.request<{ interactions: Array<{ response: unknown }> }>('jobs/history', { job_id: created.job_id });
  t.same(history.interactions.map((i) => i.response), ['answer one', { choice: 'b' }], 'history holds the first delivery of each round only');
  t.notOk(JSON.stringify(history).includes('key-1'), 'idempotency keys are not exposed in history');
});

t.test('API-3 an input_required event carries the persisted pending, after the status_changed to waiting_user, once per round', async (t) => {
  const created = await createInteractive(client, { scenario: 'ask' }, 'gemini');
  const trail = await EventTrail.follow(daemon, created.job_id);
  await untilWaiting(created.job_id);
  const { pending } = await client.request<{ pending: unknown }>('jobs/pending', { job_id: created.job_id });
  const events = trail.events;
  const toWaiting = events.findIndex((e) => e.type === 'status_changed' && e.data['to'] === 'waiting_user');
  const inputRequired = events.findIndex((e) => e.type === 'input_required');
  t.ok(toWaiting >= 0, 'status_changed to waiting_user');
  t.ok(inputRequired > toWaiting, 'input_required comes after it');
  t.same(events[inputRequired]?.data, { pending }, 'and carries exactly the persisted pending');
  t.match(events[toWaiting]?.data, { from: 'running', to: 'waiting_user' });

  await reply(created.job_id, 1, 'Paris');
  await waitForStatus(client, created.job_id);
  const all = trail.events;
  t.same(all.map((e) => e.seq), all.map((_, i) => i + 1), 'seq has no gaps');
  t.equal(all.filter((e) => e.type === 'input_required').length, 1, 'one input_required for one question');
  t.same(
    all.filter((e) => e.type === 'status_changed').map((e) => e.data),
    [
      { from: null, to: 'queued' },
      { from: 'queued', to: 'running' },
      { from: 'running', to: 'waiting_user' },
      { from: 'waiting_user', to: 'queued' },
      { from: 'queued', to: 'running' },
      { from: 'running', to: 'succeeded' },
    ],
  );
  t.match(all.at(-1), { type: 'finished', data: { status: 'succeeded', error: null } });
});
