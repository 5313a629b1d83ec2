// The notifier's schedule (docs/notify.md, "Retries"), on a fake clock: the first try at once,
// the first retry within a second, then doubling waits up to five minutes, given up past
// retry_for; the same delivery id on every try; what a restart picks up; nothing awaited by the
// move itself. No wall-clock time is asserted: the test waits for each try and each armed timer.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Timer } from '../../daemon/base/clock.js';
import type { NotifyHook } from '../../daemon/base/config-notify.js';
import type { Logger } from '../../daemon/base/logger.js';
import { FIRST_RETRY_MS, MAX_RETRY_WAIT_MS, retryDelayMs } from '../../daemon/notify/backoff.js';
import { Notifier, type JobLookup } from '../../daemon/notify/notifier.js';
import { Outbox } from '../../daemon/notify/outbox.js';
import { signature } from '../../daemon/notify/payload.js';
import type { SendOutcome, SendRequest } from '../../daemon/notify/sender.js';
import { FakeClock } from '../helpers/fake-clock.js';

const root = await mkdtemp(join(tmpdir(), 'skilld-notify-retries-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(root, `notify-${(dirs += 1)}`);

/** A fake clock that keeps the delay of each timer armed, and says when there are so many. */
class WatchedClock extends FakeClock {
  readonly delays: number[] = [];
  #waiters: Array<() => void> = [];
  override setTimer(delayMs: number, callback: () => void): Timer {
    const timer = super.setTimer(delayMs, callback);
    this.delays.push(delayMs);
    for (const waiter of this.#waiters.splice(0)) waiter();
    return timer;
  }
  /** The delay of the `count`th timer armed, once it is. */
  async armed(count: number): Promise<number> {
    while (this.delays.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.delays[count - 1] as number;
  }
}

/** A receiver as a queue of answers: each request is kept, and answered with the next outcome. */
class Receiver {
  readonly requests: SendRequest[] = [];
  #waiters: Array<() => void> = [];
  constructor(readonly answers: SendOutcome[]) {}
  send = (request: SendRequest, signal: AbortSignal): Promise<SendOutcome> => {
    this.requests.push(request);
    for (const waiter of this.#waiters.splice(0)) waiter();
    const answer = this.answers.shift();
    if (answer !== undefined) return Promise.resolve(answer);
    // No answer left: it hangs until dropped.
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve({ status: null, error: 'dropped' })));
  };
  /** Resolves once `count` requests have come. */
  async hits(count: number): Promise<SendRequest[]> {
    while (this.requests.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.requests;
  }
}

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const lookup: JobLookup = {
  job: async (jobId) => ({ job_id: jobId, skill_id: jobId.startsWith('job-other') ? 'other' : 'plan-trip', owner: { uid: 1000, user: 'alice' } }),
  pending: async () => ({ interaction_id: 1, prompt: 'Which city?', kind: 'free_text' }),
};
const hook = (given: Partial<NotifyHook> = {}): NotifyHook => ({ url: 'http://127.0.0.1:9/in', events: ['waiting_user', 'failed'], secret_env: 'S', skills: null, retry_for_ms: 3_600_000, ...given });
const failure: SendOutcome = { status: 500, error: null };
const ok: SendOutcome = { status: 204, error: null };

/** Its outbox, and a way to wait until it has stored so many attempts (each is stored a moment after its answer). */
interface Watched {
  outbox: Outbox;
  /** The attempts read at open. */
  initial: number;
  stored(count: number): Promise<void>;
}
const watched = new WeakMap<Notifier, Watched>();

async function notifier(dir: string, clock: FakeClock, receiver: Receiver, hooks: NotifyHook[]): Promise<Notifier> {
  let ids = 0;
  const outbox = await Outbox.open(dir);
  let stored = 0;
  let waiters: Array<() => void> = [];
  const record = outbox.record.bind(outbox);
  outbox.record = async (attempt) => {
    await record(attempt);
    stored += 1;
    for (const waiter of waiters.splice(0)) waiter();
  };
  const n = new Notifier({ hooks, secret: () => 'k', outbox, clock, logger: quiet, lookup, send: receiver.send, userAgent: 'skilld/test', random: () => 0.5, newId: () => `d-${(ids += 1)}` });
  watched.set(n, {
    outbox,
    initial: outbox.recent(200).length,
    stored: async (count) => {
      while (stored < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  });
  return n;
}

t.test('retryDelayMs: within the first second, then doubling, never more than five minutes apart', async (t) => {
  t.equal(retryDelayMs(1, () => 0), FIRST_RETRY_MS / 2);
  t.ok(retryDelayMs(1, () => 0.999999) <= FIRST_RETRY_MS);
  t.same([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, () => 0.999999)), [1000, 2000, 4000, 8000, 16000]);
  t.equal(retryDelayMs(9, () => 0.999999), 256_000);
  t.equal(retryDelayMs(10, () => 0.999999), MAX_RETRY_WAIT_MS);
  t.equal(retryDelayMs(1000, () => 0.999999), MAX_RETRY_WAIT_MS, 'no overflow after many tries');
  t.equal(retryDelayMs(1000, () => 0), MAX_RETRY_WAIT_MS / 2, 'the jitter keeps the upper half');
});

t.test('a failing receiver: tried at once, then after 0.75 s, 1.5 s, 3 s, …, given up once the next try would pass retry_for', async (t) => {
  const clock = new WatchedClock();
  const receiver = new Receiver([failure, failure, { status: 302, error: null }, { status: null, error: 'no answer within 10 s' }]);
  const dir = freshDir();
  const n = await notifier(dir, clock, receiver, [hook({ retry_for_ms: 10_000 })]);
  n.start();
  n.moved('job-1', 'waiting_user');
  for (let tries = 1; tries < 4; tries += 1) {
    clock.advance(await clock.armed(tries));
    await receiver.hits(tries + 1);
  }
  t.same(clock.delays, [750, 1500, 3000], 'random 0.5: three quarters of 1 s, 2 s, 4 s');
  // The fourth try failed too; the next would come 6 s later, at 11.25 s, past the 10 s of retry_for.
  const log = await waitForLog(n, 4);
  t.same(log.map((a) => [a.attempt, a.status, a.error, a.outcome]), [[1, 500, null, 'retrying'], [2, 500, null, 'retrying'], [3, 302, null, 'retrying'], [4, null, 'no answer within 10 s', 'given_up']], 'a redirect is a failure');
  t.equal(log[3]?.next_at, null);
  t.equal(log[0]?.next_at, new Date(Date.parse('2026-01-01T00:00:00Z') + 750).toISOString());
  t.same(new Set(receiver.requests.map((r) => r.headers['X-Skilld-Delivery'])), new Set(['d-1']), 'one delivery id on every try');
  for (const request of receiver.requests) t.equal(request.headers['X-Skilld-Signature-256'], signature(request.body, 'k'));
  t.equal(receiver.requests[0]?.body, receiver.requests[3]?.body, 'the same body each time');
  clock.advance(60 * 60 * 1000);
  t.equal(receiver.requests.length, 4, 'nothing more');
  await n.close();
});

t.test('delivered on the third try: no timer after it, and the outbox owes nothing', async (t) => {
  const clock = new WatchedClock();
  const receiver = new Receiver([failure, failure, ok]);
  const n = await notifier(freshDir(), clock, receiver, [hook()]);
  n.moved('job-1', 'failed');
  clock.advance(await clock.armed(1));
  await receiver.hits(2);
  clock.advance(await clock.armed(2));
  await receiver.hits(3);
  const log = await waitForLog(n, 3);
  t.same(log.map((a) => a.outcome), ['retrying', 'retrying', 'delivered']);
  t.same(watched.get(n)?.outbox.pending(), [], 'owed no more');
  t.equal(clock.delays.length, 2, 'no timer after it');
  t.same(JSON.parse(receiver.requests[2]?.body ?? ''), { event: 'failed', ts: '2026-01-01T00:00:00.000Z', job: { job_id: 'job-1', skill_id: 'plan-trip', status: 'failed', owner: { uid: 1000, user: 'alice' }, pending: null } });
  await n.close();
});

t.test('a restart picks up what is owed, at its time, with the same delivery id and the attempt count going on', async (t) => {
  const dir = freshDir();
  const clock = new WatchedClock();
  const first = new Receiver([failure]);
  const before = await notifier(dir, clock, first, [hook()]);
  before.moved('job-1', 'waiting_user');
  const wait = await clock.armed(1);
  await waitForLog(before, 1);
  await before.close();

  const second = new Receiver([failure, ok]);
  const after = await notifier(dir, clock, second, [hook()]);
  after.start();
  t.equal(await clock.armed(2), wait, 'armed for the time the first daemon had set');
  clock.advance(wait);
  await second.hits(1);
  clock.advance(await clock.armed(3));
  await second.hits(2);
  const log = await waitForLog(after, 3);
  t.same(log.map((a) => [a.delivery_id, a.attempt, a.outcome]), [['d-1', 1, 'retrying'], ['d-1', 2, 'retrying'], ['d-1', 3, 'delivered']]);
  t.equal(second.requests[0]?.headers['X-Skilld-Delivery'], first.requests[0]?.headers['X-Skilld-Delivery']);
  t.equal(second.requests[0]?.body, first.requests[0]?.body);
  await after.close();
});

t.test('a try in flight when the daemon stops is not counted, and is sent again after the restart', async (t) => {
  const dir = freshDir();
  const clock = new WatchedClock();
  const hanging = new Receiver([]);
  const before = await notifier(dir, clock, hanging, [hook()]);
  before.moved('job-1', 'waiting_user');
  await hanging.hits(1);
  await before.close();
  t.same(before.log(10).attempts, [], 'nothing recorded of it');
  const again = new Receiver([ok]);
  const after = await notifier(dir, clock, again, [hook()]);
  after.start();
  await again.hits(1);
  t.same((await waitForLog(after, 1)).map((a) => [a.attempt, a.outcome]), [[1, 'delivered']]);
  t.equal(again.requests[0]?.headers['X-Skilld-Delivery'], hanging.requests[0]?.headers['X-Skilld-Delivery']);
  await after.close();
});

t.test('a webhook taken out of the config: what it was owed is given up at the next start, without a try', async (t) => {
  const dir = freshDir();
  const clock = new WatchedClock();
  const before = await notifier(dir, clock, new Receiver([failure]), [hook()]);
  before.moved('job-1', 'waiting_user');
  await waitForLog(before, 1);
  await before.close();
  const receiver = new Receiver([]);
  const after = await notifier(dir, clock, receiver, [hook({ url: 'http://127.0.0.1:9/elsewhere' })]);
  after.start();
  const log = await waitForLog(after, 2);
  t.same(log.map((a) => [a.attempt, a.status, a.error, a.outcome]), [[1, 500, null, 'retrying'], [1, null, 'its webhook is no longer in the config', 'given_up']]);
  t.equal(receiver.requests.length, 0);
  await after.close();
});

t.test('which webhooks hear a move: its events, its skills; the move itself returns at once, even with a receiver that never answers', async (t) => {
  const clock = new WatchedClock();
  const receiver = new Receiver([]);
  const n = await notifier(freshDir(), clock, receiver, [hook({ events: ['succeeded'], url: 'http://127.0.0.1:9/ends' }), hook({ events: ['waiting_user'], skills: ['plan-trip'], url: 'http://127.0.0.1:9/asks' })]);
  n.moved('job-1', 'running');
  n.moved('job-other-1', 'waiting_user');
  n.moved('job-1', 'waiting_user');
  n.moved('job-2', 'succeeded');
  const requests = await receiver.hits(2);
  t.same(requests.map((r) => [r.url, r.headers['X-Skilld-Event'], (JSON.parse(r.body) as { job: { job_id: string } }).job.job_id]).sort(), [
    ['http://127.0.0.1:9/asks', 'waiting_user', 'job-1'],
    ['http://127.0.0.1:9/ends', 'succeeded', 'job-2'],
  ]);
  t.same((JSON.parse(requests.find((r) => r.url.endsWith('/asks'))?.body ?? '') as { job: { pending: unknown } }).job.pending, { interaction_id: 1, prompt: 'Which city?', kind: 'free_text' });
  await n.close();
});

/** The notifier's log once this notifier has stored `count` attempts in all (with those it read at start). */
async function waitForLog(n: Notifier, count: number): Promise<ReturnType<Notifier['log']>['attempts']> {
  const watch = watched.get(n);
  await watch?.stored(count - watch.initial);
  return n.log(200).attempts;
}
