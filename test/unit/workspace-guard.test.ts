// A job's workspace held to limits.workspace (workspace-guard.ts): measured every minute while a
// turn runs and once at its end, on the fake clock; over it, the turn is stopped and taken as
// failed with WORKSPACE_TOO_LARGE, the limit and the size in its details. And how a folder's disk
// space is counted (disk-usage.ts).
import t from 'tap';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKSPACE_CHECK_MS, guardWorkspace } from '../../daemon/jobs/workspace-guard.js';
import type { TurnHandle, TurnReport } from '../../daemon/jobs/turn.js';
import { diskUsage } from '../../daemon/sandbox/disk-usage.js';
import { FakeClock } from '../helpers/fake-clock.js';

function turn(): { handle: TurnHandle; end: (report: TurnReport) => void; stops: string[] } {
  let end!: (report: TurnReport) => void;
  const done = new Promise<TurnReport>((resolve) => (end = resolve));
  const stops: string[] = [];
  return { handle: { pid: 1, stop: (reason) => void stops.push(reason), done, detach: () => Promise.resolve() }, end, stops };
}

const ok = (): TurnReport => ({ outcome: { kind: 'ok' }, parsed: { sessionId: null, messages: [], engineError: null, usage: null, usageSpan: 'turn' }, exit: { code: 0, signal: null, spawnError: null }, pid: 1 });
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('measured every minute while the turn runs: over the limit, the turn is stopped and fails with the size', async (t) => {
  const clock = new FakeClock();
  let size = 1000;
  const { handle, end, stops } = turn();
  const guarded = guardWorkspace(handle, clock, { limit: 4096, measure: () => Promise.resolve(size) });
  clock.advance(WORKSPACE_CHECK_MS);
  await settle();
  t.same(stops, [], 'within the limit, it runs on');
  size = 5000;
  clock.advance(WORKSPACE_CHECK_MS);
  await settle();
  t.same(stops, ['canceled'], 'over it, stopped');
  end({ ...ok(), outcome: { kind: 'canceled' } });
  t.match((await guarded.done).outcome, { kind: 'failed', code: 'WORKSPACE_TOO_LARGE', message: /takes 5000 bytes, over its limit of 4096 .*stopped/, details: { limit: 'workspace', value: 4096, used: 5000 } });
});

t.test('measured at the turn\'s end; no limit, no measure', async (t) => {
  const clock = new FakeClock();
  const { handle, end } = turn();
  const guarded = guardWorkspace(handle, clock, { limit: 4096, measure: () => Promise.resolve(9000) });
  end(ok());
  t.match((await guarded.done).outcome, { kind: 'failed', code: 'WORKSPACE_TOO_LARGE', details: { used: 9000 } });
  const within = turn();
  const fine = guardWorkspace(within.handle, clock, { limit: 4096, measure: () => Promise.resolve(10) });
  within.end(ok());
  t.same((await fine.done).outcome, { kind: 'ok' });
  const free = turn();
  t.equal(guardWorkspace(free.handle, clock, { limit: null, measure: () => Promise.reject(new Error('never asked')) }), free.handle, 'no limit: the turn as it is');
});

t.test('a folder\'s disk space: blocks, each inode once, links as themselves', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'skilld-du-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const empty = await diskUsage(dir);
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'a'), Buffer.alloc(1024 * 1024, 1));
  linkSync(join(dir, 'sub', 'a'), join(dir, 'hard'));
  symlinkSync('/usr', join(dir, 'usr'));
  const used = await diskUsage(dir);
  t.ok(used - empty >= 1024 * 1024 && used - empty < 1.5 * 1024 * 1024, `one MiB, counted once, /usr not entered (${used - empty})`);
  t.equal(await diskUsage(join(dir, 'gone')), 0);
});
