import t from 'tap';
import { SlotPool } from '../../daemon/slots/pool.js';

/** A pool plus the order in which grants happened. */
function pool(max: number): { pool: SlotPool; granted: string[]; request(id: string): void } {
  const p = new SlotPool(max);
  const granted: string[] = [];
  return { pool: p, granted, request: (id) => p.request(id, () => granted.push(id)) };
}

t.test('grants at once while slots are free, then queues', async (t) => {
  const p = pool(2);
  p.request('a');
  p.request('b');
  t.same(p.granted, ['a', 'b'], 'both granted synchronously');
  p.request('c');
  t.same(p.granted, ['a', 'b'], 'the third waits');
  t.same(p.pool.stats(), { max: 2, used: 2, queued: 1 });
  t.equal(p.pool.holds('a'), true);
  t.equal(p.pool.holds('c'), false);
});

t.test('LC-3 FIFO: released slots go to waiters in request order', async (t) => {
  const p = pool(1);
  for (const id of ['a', 'b', 'c', 'd']) p.request(id);
  t.same(p.granted, ['a']);
  p.pool.release('a');
  t.same(p.granted, ['a', 'b']);
  p.pool.release('b');
  t.same(p.granted, ['a', 'b', 'c']);
  p.pool.release('c');
  t.same(p.granted, ['a', 'b', 'c', 'd']);
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 0 });
});

t.test('a grant callback runs exactly once per request', async (t) => {
  const p = new SlotPool(1);
  let aGrants = 0;
  let bGrants = 0;
  p.request('a', () => (aGrants += 1));
  p.request('b', () => (bGrants += 1));
  p.release('a');
  p.release('a');
  p.release('b');
  t.equal(aGrants, 1);
  t.equal(bGrants, 1);
});

t.test('release is idempotent and a no-op for a job that holds nothing', async (t) => {
  const p = pool(1);
  p.request('a');
  p.request('b');
  p.request('c');
  p.pool.release('a');
  t.same(p.granted, ['a', 'b']);
  p.pool.release('a');
  t.same(p.granted, ['a', 'b'], 'a second release of a does not free b\'s slot');
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 1 });
  p.pool.release('never-seen');
  p.pool.release('c');
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 1 }, 'releasing a waiter does not free a slot');
  t.equal(p.pool.holds('b'), true);
});

t.test('withdraw removes a waiting request; true only when there was one', async (t) => {
  const p = pool(1);
  p.request('a');
  p.request('b');
  p.request('c');
  t.equal(p.pool.withdraw('b'), true);
  t.equal(p.pool.withdraw('b'), false, 'second withdraw');
  t.equal(p.pool.withdraw('a'), false, 'a holder is not a waiter');
  t.equal(p.pool.withdraw('zzz'), false);
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 1 });
  p.pool.release('a');
  t.same(p.granted, ['a', 'c'], 'the withdrawn job is never granted');
  t.equal(p.pool.holds('b'), false);
});

t.test('a job cannot hold or await two slots at once, but may ask again after release or withdraw', async (t) => {
  const p = pool(1);
  p.request('a');
  t.throws(() => p.request('a'), /already holds or awaits/);
  p.request('b');
  t.throws(() => p.request('b'), /already holds or awaits/);
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 1 });
  p.pool.release('a');
  p.request('a');
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 1 }, 'a queues again while b holds');
  p.pool.withdraw('a');
  p.request('a');
  t.same(p.pool.stats(), { max: 1, used: 1, queued: 1 });
});

t.test('LC-4 a job that released its slot re-queues behind earlier waiters', async (t) => {
  const p = pool(1);
  p.request('resumable');
  p.request('queued-1');
  p.pool.release('resumable'); // entering waiting_user
  t.same(p.granted, ['resumable', 'queued-1']);
  p.request('resumable'); // the reply arrives
  p.request('queued-2');
  p.pool.release('queued-1');
  t.same(p.granted, ['resumable', 'queued-1', 'resumable'], 'FIFO across the re-request');
});

t.test('stats track holders and waiters', async (t) => {
  const p = pool(3);
  t.same(p.pool.stats(), { max: 3, used: 0, queued: 0 });
  for (const id of ['a', 'b', 'c', 'd', 'e']) p.request(id);
  t.same(p.pool.stats(), { max: 3, used: 3, queued: 2 });
  p.pool.release('b');
  t.same(p.pool.stats(), { max: 3, used: 3, queued: 1 });
  p.pool.withdraw('e');
  p.pool.release('a');
  p.pool.release('c');
  t.same(p.pool.stats(), { max: 3, used: 1, queued: 0 });
  t.equal(p.pool.max, 3);
});

t.test('never more than max holders, whatever the sequence of operations', async (t) => {
  const max = 3;
  const p = new SlotPool(max);
  const holders = new Set<string>();
  const waiting: string[] = [];
  let violations = 0;
  let grants = 0;
  // Deterministic pseudo-random walk.
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let step = 0; step < 2000; step += 1) {
    const op = rand(3);
    if (op === 0) {
      const id = `job-${step}`;
      waiting.push(id);
      p.request(id, () => {
        grants += 1;
        holders.add(id);
        waiting.splice(waiting.indexOf(id), 1);
        if (holders.size > max) violations += 1;
      });
    } else if (op === 1 && holders.size > 0) {
      const id = [...holders][rand(holders.size)] as string;
      holders.delete(id);
      p.release(id);
    } else if (op === 2 && waiting.length > 0) {
      const id = waiting[rand(waiting.length)] as string;
      if (p.withdraw(id)) waiting.splice(waiting.indexOf(id), 1);
    }
    const stats = p.stats();
    if (stats.used > max || stats.used !== holders.size || stats.queued !== waiting.length) violations += 1;
    // A free slot with a waiter would be a stall.
    if (stats.used < max && stats.queued > 0) violations += 1;
  }
  t.ok(grants > 100, `the walk granted slots (${grants})`);
  t.equal(violations, 0);
});
