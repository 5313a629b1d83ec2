// Subscriptions over the files store's event log, with a connection whose backlog the test sets:
// each subscriber gets every event once, in order, without gaps, whether the live stream gives it
// or the store has to (a replay, a gap, missed announcements, a client that reads slowly).
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Limiter } from '../../rpc/limiter.js';
import type { Clock } from '../../daemon/base/clock.js';
import { FOLLOW_PAGE_BYTES, LIVE_BACKLOG_BYTES, type EventOutlet } from '../../daemon/event-follower.js';
import { EventLog } from '../../daemon/store/event-log.js';
import { createLogger } from '../../daemon/base/logger.js';
import { Subscriptions } from '../../daemon/subscriptions.js';
import type { EventCursor, EventListener, EventPage, JobEventRecord, JobEvents, JobEventType } from '../../daemon/model/events.js';

const clock: Clock = { now: () => new Date(), setTimer: (ms, callback) => {
  const handle = setTimeout(callback, ms);
  return { cancel: () => clearTimeout(handle) };
} };

/** A client connection the test drives: what was sent, and a backlog it sets and drains. */
class TestOutlet implements EventOutlet {
  readonly sent: JobEventRecord[] = [];
  backlog = 0;
  closed = false;
  readonly #limiter = new Limiter(16);
  readonly #drainWaiters: Array<() => void> = [];
  readonly #closeHandlers: Array<() => void> = [];
  #sentWaiters: Array<() => void> = [];

  run<T>(task: () => Promise<T>): Promise<T> {
    return this.#limiter.run(task);
  }

  get reading(): number {
    return this.#limiter.running;
  }

  notify(method: string, params: unknown): void {
    if (this.closed || method !== 'job/event') return;
    this.sent.push(params as JobEventRecord);
    for (const wake of this.#sentWaiters.splice(0)) wake();
  }

  drained(): Promise<void> {
    if (this.closed || this.backlog <= LIVE_BACKLOG_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  drain(): void {
    this.backlog = 0;
    for (const wake of this.#drainWaiters.splice(0)) wake();
  }

  onClose(handler: () => void): void {
    this.#closeHandlers.push(handler);
  }

  /** Subscriptions held; each release counts once. */
  holds = 0;

  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (!released) this.holds -= 1;
      released = true;
    };
  }

  close(): void {
    this.closed = true;
    for (const handler of this.#closeHandlers.splice(0)) handler();
    this.drain();
  }

  /** Resolves once `count` events were sent. */
  async until(count: number): Promise<void> {
    while (this.sent.length < count) await new Promise<void>((resolve) => this.#sentWaiters.push(resolve));
  }

  seqs(): number[] {
    return this.sent.map((e) => e.seq);
  }
}

/** An event log whose live stream the test can interrupt: listeners hear only while `live` is true. */
class PatchyEvents implements JobEvents {
  readonly log: EventLog;
  live = true;
  readonly #missed = new Set<() => void>();

  constructor(log: EventLog) {
    this.log = log;
  }

  prime(jobId: string): Promise<boolean> {
    return this.log.prime(jobId);
  }

  emit(jobId: string, type: JobEventType, data: unknown): void {
    this.log.emit(jobId, type, data);
  }

  listen(listener: EventListener): () => void {
    return this.log.listen((event) => (this.live ? listener(event) : undefined));
  }

  onMissed(handler: () => void): () => void {
    this.#missed.add(handler);
    return () => this.#missed.delete(handler);
  }

  missed(): void {
    for (const handler of this.#missed) handler();
  }

  read(jobId: string, cursor: EventCursor, maxBytes: number): Promise<EventPage> {
    return this.log.read(jobId, cursor, maxBytes);
  }

  close(jobId: string): Promise<void> {
    return this.log.close(jobId);
  }

  closeAll(): Promise<void> {
    return this.log.closeAll();
  }
}

async function setUp(t: Test): Promise<{ events: PatchyEvents; subs: Subscriptions; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-subs-'));
  // An event file may still be written as a test ends: the removal tries again rather than fail it.
  t.teardown(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'job-1'));
  const events = new PatchyEvents(new EventLog(dir, clock));
  return { events, subs: new Subscriptions(events, clock, createLogger('silent')), dir };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

t.test('a replay after after_seq, then the live events, each once and in order', async (t) => {
  const { events, subs } = await setUp(t);
  for (let i = 1; i <= 5; i += 1) events.emit('job-1', 'output', { i });
  const conn = new TestOutlet();
  subs.subscribe(conn, { job_id: 'job-1', after_seq: 2 });
  // Emitted before the replay has begun: they wait for it.
  events.emit('job-1', 'output', { i: 6 });
  await conn.until(4);
  events.emit('job-1', 'output', { i: 7 });
  await conn.until(5);
  t.same(conn.seqs(), range(3, 7));
});

t.test('a live event past a gap brings the missing ones from the store first', async (t) => {
  const { events, subs } = await setUp(t);
  const conn = new TestOutlet();
  subs.subscribe(conn, { job_id: 'job-1' });
  events.emit('job-1', 'output', { i: 1 });
  events.live = false;
  events.emit('job-1', 'output', { i: 2 });
  events.emit('job-1', 'output', { i: 3 });
  events.live = true;
  events.emit('job-1', 'output', { i: 4 });
  await conn.until(4);
  t.same(conn.seqs(), [1, 2, 3, 4]);
});

t.test('announcements missed: each follower reads again from where it stands, so the last events arrive too', async (t) => {
  const { events, subs } = await setUp(t);
  const one = new TestOutlet();
  const every = new TestOutlet();
  subs.subscribe(one, { job_id: 'job-1' });
  subs.subscribe(every, {});
  events.emit('job-1', 'status_changed', { to: 'running' });
  events.live = false;
  events.emit('job-1', 'output', { line: 'unheard' });
  events.emit('job-1', 'finished', { status: 'succeeded' });
  events.live = true;
  events.missed();
  await Promise.all([one.until(3), every.until(3)]);
  t.same(one.seqs(), [1, 2, 3]);
  t.same(every.seqs(), [1, 2, 3]);
});

t.test('a client that reads slowly gets no live events while its backlog is high, then all of them from the store, a page at a time', async (t) => {
  const { events, subs } = await setUp(t);
  const conn = new TestOutlet();
  subs.subscribe(conn, { job_id: 'job-1' });
  events.emit('job-1', 'output', { i: 1 });
  await conn.until(1);
  conn.backlog = LIVE_BACKLOG_BYTES + 1;
  const line = 'x'.repeat(16 * 1024);
  const count = Math.ceil((3 * FOLLOW_PAGE_BYTES) / line.length);
  for (let i = 2; i <= count; i += 1) events.emit('job-1', 'output', { i, line });
  // Let the writes land and the follower wait for the client.
  await events.log.read('job-1', { seq: 0, at: 0 }, 1);
  t.same(conn.seqs(), [1], 'nothing more while the client is behind');
  t.equal(conn.reading, 1, 'one read waits for the client, as a request in flight of its connection');
  conn.drain();
  await conn.until(count);
  t.same(conn.seqs(), range(1, count), 'then every event once, in order');
  events.emit('job-1', 'output', { i: count + 1 });
  await conn.until(count + 1);
  t.same(conn.seqs().slice(-1), [count + 1], 'and live again');
});

t.test('a closed connection stops its replay; an unsubscribed one hears nothing more', async (t) => {
  const { events, subs } = await setUp(t);
  for (let i = 1; i <= 3; i += 1) events.emit('job-1', 'output', { i });
  const closing = new TestOutlet();
  closing.backlog = LIVE_BACKLOG_BYTES + 1;
  subs.subscribe(closing, { job_id: 'job-1', after_seq: 0 });
  await events.log.read('job-1', { seq: 0, at: 0 }, 1);
  closing.close();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(closing.sent.length, 0, 'nothing sent after the close');
  t.equal(closing.reading, 0, 'the read ended with the connection');
  t.notOk(subs.follows('job-1'), 'nobody follows the job any more');

  const leaving = new TestOutlet();
  const { subscription_id } = subs.subscribe(leaving, { job_id: 'job-1' });
  events.emit('job-1', 'output', { i: 4 });
  await leaving.until(1);
  t.equal(leaving.holds, 1, 'a subscription keeps its connection from counting as idle');
  subs.unsubscribe(leaving, subscription_id);
  t.equal(leaving.holds, 0, 'until it ends');
  events.emit('job-1', 'output', { i: 5 });
  t.same(leaving.seqs(), [4]);
});

t.test('a subscription to every job forgets a job once it sent its finished event', async (t) => {
  const { events, subs } = await setUp(t);
  const conn = new TestOutlet();
  subs.subscribe(conn, {});
  events.emit('job-1', 'status_changed', { to: 'running' });
  events.emit('job-1', 'finished', { status: 'succeeded' });
  await conn.until(2);
  // A later event of the job (none comes in practice) would start a new follower from it.
  events.emit('job-1', 'output', { after: 'finished' });
  await conn.until(3);
  t.same(conn.seqs(), [1, 2, 3]);
});

t.test('a subscription to every job that may see only some: each job asked about once, at its first event; an allowed one from that event on, the rest never', async (t) => {
  const { events, subs, dir } = await setUp(t);
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'job-2'));
  const conn = new TestOutlet();
  const asked: string[] = [];
  let allow: (allowed: boolean) => void = () => undefined;
  subs.subscribe(conn, {}, (jobId) => {
    asked.push(jobId);
    // job-1 is answered later: its events meanwhile come from the store.
    return jobId === 'job-1' ? new Promise<boolean>((resolve) => (allow = resolve)) : Promise.resolve(false);
  });
  events.emit('job-1', 'status_changed', { from: null, to: 'queued' });
  events.emit('job-2', 'status_changed', { from: null, to: 'queued' });
  events.emit('job-1', 'message', { text: 'one' });
  events.emit('job-2', 'message', { text: 'secret' });
  allow(true);
  await conn.until(2);
  events.emit('job-1', 'message', { text: 'two' });
  events.emit('job-2', 'finished', { status: 'succeeded', error: null });
  await conn.until(3);
  t.same(conn.sent.map((event) => `${event.job_id}#${event.seq}`), ['job-1#1', 'job-1#2', 'job-1#3'], "job-1's events in order, the one before it was allowed included");
  t.same(asked, ['job-1', 'job-2'], 'each job asked about once');
  t.notOk(conn.sent.some((event) => event.job_id === 'job-2'), 'nothing of job-2');
});
