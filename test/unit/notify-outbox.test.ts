// The outbox (daemon/notify/outbox.ts): a delivery is on disk before its first attempt, each
// attempt's outcome too, a reopened outbox owes what it owed, and the file is compacted.
import t from 'tap';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEPT_ATTEMPTS, Outbox, type AttemptRecord, type Delivery } from '../../daemon/notify/outbox.js';

const root = await mkdtemp(join(tmpdir(), 'skilld-outbox-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(root, `notify-${(dirs += 1)}`);

function delivery(n: number, overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: `d-${n}`, hook: 'k'.repeat(32), url: 'http://127.0.0.1:9/in', event: 'waiting_user', job_id: `job-${n}`, body: `{"n":${n}}`,
    created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-01T01:00:00.000Z', attempts: 0, next_at: '2026-01-01T00:00:00.000Z', ...overrides,
  };
}

function attempt(d: Delivery, n: number, outcome: AttemptRecord['outcome'], nextAt: string | null = null): AttemptRecord {
  return { delivery_id: d.id, url: d.url, event: d.event, job_id: d.job_id, attempt: n, at: '2026-01-01T00:00:01.000Z', status: outcome === 'delivered' ? 204 : 500, error: null, next_at: nextAt, outcome };
}

t.test('what is stored survives a reopen: owed deliveries with their attempts so far, the attempts in order; delivered ones are owed no more', async (t) => {
  const dir = freshDir();
  const outbox = await Outbox.open(dir);
  const [one, two, three] = [delivery(1), delivery(2), delivery(3)];
  for (const d of [one, two, three]) await outbox.add(d);
  await outbox.record(attempt(one, 1, 'retrying', '2026-01-01T00:00:02.000Z'));
  await outbox.record(attempt(two, 1, 'delivered'));
  await outbox.record(attempt(three, 1, 'given_up'));
  await outbox.close();

  const again = await Outbox.open(dir);
  t.same(again.pending(), [{ ...one, attempts: 1, next_at: '2026-01-01T00:00:02.000Z' }], 'only the one still retrying');
  t.same(again.recent(10).map((a) => [a.delivery_id, a.outcome]), [['d-1', 'retrying'], ['d-2', 'delivered'], ['d-3', 'given_up']]);
  t.same(again.recent(1).map((a) => a.delivery_id), ['d-3'], 'the last N, oldest first');
  t.equal(again.skipped, 0);
  await again.close();
});

t.test('a torn last line (a crash mid-write) is cut off; an unreadable line is skipped and counted', async (t) => {
  const dir = freshDir();
  const outbox = await Outbox.open(dir);
  await outbox.add(delivery(1));
  await outbox.close();
  await appendFile(join(dir, 'outbox.ndjson'), 'not json\n{"delivery":{"id":"d-2","hook":');
  const again = await Outbox.open(dir);
  t.same(again.pending().map((d) => d.id), ['d-1']);
  t.equal(again.skipped, 1);
  t.notMatch(await readFile(join(dir, 'outbox.ndjson'), 'utf8'), /"d-2"/, 'the torn line is gone from the file');
  await again.add(delivery(3));
  await again.close();
  const third = await Outbox.open(dir);
  t.same(third.pending().map((d) => d.id), ['d-1', 'd-3'], 'what comes after lands on a whole line');
  await third.close();
});

t.test('compaction: delivered and given-up deliveries go, the last attempts and what is owed stay, and a reopen reads the same', async (t) => {
  const dir = freshDir();
  const outbox = await Outbox.open(dir, { compactAtBytes: 4096 });
  const owed = delivery(0, { body: 'x'.repeat(200) });
  await outbox.add(owed);
  await outbox.record(attempt(owed, 1, 'retrying', '2026-01-01T00:05:00.000Z'));
  let largest = 0;
  for (let n = 1; n <= KEPT_ATTEMPTS + 100; n += 1) {
    const d = delivery(n, { body: 'y'.repeat(500) });
    await outbox.add(d);
    await outbox.record(attempt(d, 1, n % 2 === 0 ? 'delivered' : 'given_up'));
    largest = Math.max(largest, outbox.bytes);
  }
  await outbox.compact();
  const compacted = outbox.bytes;
  t.ok(compacted < largest, `the file shrank (${compacted} < ${largest} bytes)`);
  // What stays is the last KEPT_ATTEMPTS attempts (~250 bytes each) and the one owed delivery.
  t.ok(compacted < (KEPT_ATTEMPTS + 2) * 400, `bounded by what is live (${compacted} bytes)`);
  const before = { pending: outbox.pending(), recent: outbox.recent(KEPT_ATTEMPTS) };
  t.same(before.pending.map((d) => [d.id, d.attempts]), [['d-0', 1]]);
  t.equal(before.recent.length, KEPT_ATTEMPTS);
  t.equal(before.recent.at(-1)?.delivery_id, `d-${KEPT_ATTEMPTS + 100}`);
  await outbox.record(attempt(owed, 2, 'retrying', '2026-01-01T00:10:00.000Z'));
  await outbox.close();

  const again = await Outbox.open(dir);
  t.same(again.pending(), [{ ...owed, attempts: 2, next_at: '2026-01-01T00:10:00.000Z' }], 'the attempt after the rewrite applies on top');
  t.same(again.recent(KEPT_ATTEMPTS).map((a) => a.delivery_id), [...before.recent.slice(1).map((a) => a.delivery_id), 'd-0']);
  await again.close();
});

t.test('the file compacts itself once most of it is dead', async (t) => {
  const dir = freshDir();
  const outbox = await Outbox.open(dir, { compactAtBytes: 2048 });
  let largest = 0;
  for (let n = 1; n <= KEPT_ATTEMPTS * 3; n += 1) {
    const d = delivery(n, { body: 'z'.repeat(1000) });
    await outbox.add(d);
    await outbox.record(attempt(d, 1, 'delivered'));
    largest = Math.max(largest, outbox.bytes);
  }
  await outbox.close();
  // Each delivery's line is over 1 KB: without compaction the file would hold them all.
  t.ok(largest < KEPT_ATTEMPTS * 3 * 1000, `never near every line written (${largest} bytes at most)`);
  const again = await Outbox.open(dir);
  t.same(again.pending(), []);
  t.equal(again.recent(KEPT_ATTEMPTS).at(-1)?.delivery_id, `d-${KEPT_ATTEMPTS * 3}`);
  await again.close();
});
