import t from 'tap';
import { Limiter } from '../../rpc/limiter.js';

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

t.test('at most max tasks run at once; the rest wait in order and busy is told when waiting starts and ends', async (t) => {
  const busy: boolean[] = [];
  const limiter = new Limiter(2, (b) => busy.push(b));
  const gates = [deferred(), deferred(), deferred(), deferred()];
  const started: number[] = [];
  const runs = gates.map((gate, i) =>
    limiter.run(async () => {
      started.push(i);
      await gate.promise;
      return i;
    }),
  );
  await Promise.resolve();
  t.same(started, [0, 1], 'two run');
  t.equal(limiter.running, 2);
  t.equal(limiter.waiting, 2, 'two wait');
  t.same(busy, [true], 'waiting began');
  gates[1]?.resolve();
  await runs[1];
  await new Promise((r) => setImmediate(r));
  t.same(started, [0, 1, 2], 'the first waiter took the free place');
  t.equal(limiter.waiting, 1);
  gates[0]?.resolve();
  await runs[0];
  await new Promise((r) => setImmediate(r));
  t.same(started, [0, 1, 2, 3]);
  t.same(busy, [true, false], 'nobody waits any more');
  t.equal(limiter.waiting, 0);
  gates[2]?.resolve();
  gates[3]?.resolve();
  t.same(await Promise.all(runs), [0, 1, 2, 3]);
  t.equal(limiter.running, 0);
});

t.test('a task that throws frees its place', async (t) => {
  const limiter = new Limiter(1);
  await t.rejects(limiter.run(async () => Promise.reject(new Error('boom'))), { message: 'boom' });
  t.equal(await limiter.run(async () => 'next'), 'next');
  t.equal(limiter.running, 0);
});
