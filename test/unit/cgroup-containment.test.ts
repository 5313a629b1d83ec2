import t from 'tap';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { systemClock } from '../../daemon/base/clock.js';
import { engineCgroups, probeCgroups } from '../../daemon/process/cgroup.js';
import { CgroupContainment } from '../../daemon/process/cgroup-containment.js';
import type { Hold } from '../../daemon/process/containment.js';
import { createSpawner } from '../../daemon/process/spawn.js';

const probe = await probeCgroups();
const skip = probe.usable ? false : `cgroup v2 is not writable here (${probe.problem})`;
const home = probe.usable ? probe.dir : '';
const env = { PATH: process.env['PATH'] ?? '' };
const cgroupsOf = (jobId: string): string[] => engineCgroups(home).flatMap((c) => (c.jobId === jobId ? [c.path] : []));

/**
 * A grace period no busy machine outlasts, for a process that ends at SIGTERM: the engine of a stop
 * right after the start may appear only after it, and a short one would end it by SIGKILL instead.
 */
const POLITE_GRACE_MS = 60_000;

/** Starts `argv` under a new hold for `jobId`: the argv the hold gives is what runs. */
function startHeld(jobId: string, argv: string[], graceMs = 200): { hold: Hold; child: ChildProcess } {
  const hold = new CgroupContainment(home, systemClock, graceMs).hold({ argv, cwd: '/', env, mark: jobId });
  const [file, ...args] = hold.argv as [string, ...string[]];
  return { hold, child: spawn(file, args, { stdio: ['ignore', 'pipe', 'ignore'], detached: true, env }) };
}

/** A keeper's folder in `dir`, its output files beside it. */
const keeperIn = (dir: string): { dir: string; stdout: string; stderr: string; note: null } => ({ dir: join(dir, 'engine'), stdout: join(dir, 'stdout.log'), stderr: join(dir, 'stderr.log'), note: null });

/** Node that says `up` once it runs, then idles; `first` runs before. */
const idle = (first = ''): string[] => [process.execPath, '-e', `${first} process.stdout.write('up'); setInterval(() => {}, 1000)`];

t.test('what an engine forks at once is born in the engine cgroup; a quiet exit lets the cgroup go', { skip }, async (t) => {
  const { hold, child } = startHeld('job-unit-born', ['/bin/sh', '-c', 'cat /proc/self/cgroup']);
  let seen = '';
  child.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString()));
  await once(child, 'exit');
  t.match(seen, /^0::.*\/skilld-job-unit-born-1$/m, 'the first thing the engine ran is in its cgroup');
  t.equal(cgroupsOf('job-unit-born').length, 1, 'the cgroup stays until released');
  await hold.release(child.pid ?? null);
  t.same(cgroupsOf('job-unit-born'), [], 'released: removed');
});

t.test('a stop sends SIGTERM first and cgroup.kill after the grace period; it resolves once the cgroup is empty and removed', { skip }, async (t) => {
  const polite = startHeld('job-unit-stop', idle(), POLITE_GRACE_MS);
  const stubborn = startHeld('job-unit-stubborn', idle("process.on('SIGTERM', () => {});"));
  await Promise.all([once(polite.child.stdout as NodeJS.ReadableStream, 'data'), once(stubborn.child.stdout as NodeJS.ReadableStream, 'data')]);
  const exits = Promise.all([once(polite.child, 'exit'), once(stubborn.child, 'exit')]);
  await Promise.all([polite.hold.stop(polite.child.pid as number), stubborn.hold.stop(stubborn.child.pid as number)]);
  const [[, politeSignal], [, stubbornSignal]] = await exits;
  t.equal(politeSignal, 'SIGTERM', 'a process that takes SIGTERM ends by it');
  t.equal(stubbornSignal, 'SIGKILL', 'one that ignores it is killed by cgroup.kill');
  t.same([...cgroupsOf('job-unit-stop'), ...cgroupsOf('job-unit-stubborn')], [], 'both cgroups are removed');
  await t.resolves(stubborn.hold.release(null), 'a release after the stop just ends');
});

t.test('what is left in the cgroup when the engine has exited is stopped at its release', { skip }, async (t) => {
  const { hold, child } = startHeld('job-unit-left', idle("process.on('SIGTERM', () => {});"));
  await once(child.stdout as NodeJS.ReadableStream, 'data');
  const exit = once(child, 'exit');
  await hold.release(null);
  t.match(await exit, [null, 'SIGKILL']);
  t.same(cgroupsOf('job-unit-left'), []);
});

t.test('a stop right after the start leaves no cgroup behind, though the kernel refuses the first removal at times', { skip }, async (t) => {
  // Before the removal was retried, about one in eight of these left an empty cgroup (EBUSY just after `populated 0`).
  const spawner = createSpawner(systemClock, new CgroupContainment(home, systemClock, POLITE_GRACE_MS));
  const keeper = keeperIn(t.testdir());
  for (let i = 0; i < 40; i += 1) {
    const proc = spawner.spawn({ argv: idle(), cwd: '/', env, mark: 'job-unit-quick', sandbox: null, limits: null, stdin: 'ignore', keeper, onLine: () => undefined, onOverflow: () => undefined });
    t.match(await proc.stop(), { signal: 'SIGTERM' });
  }
  t.same(cgroupsOf('job-unit-quick'), [], 'all 40 cgroups are removed');
});

t.test('an engine that cannot be found, or whose cgroup cannot be made, is not started, and its exit says why', async (t) => {
  const request = { argv: [process.execPath, '-e', ''], cwd: '/', env, mark: 'job-unit-nowhere', sandbox: null, limits: null, stdin: 'live' as const, keeper: keeperIn(t.testdir()), onLine: () => undefined, onOverflow: () => undefined };
  const nowhere = createSpawner(systemClock, new CgroupContainment('/nonexistent/cgroup', systemClock, 200)).spawn(request);
  t.equal(nowhere.pid, null);
  const exit = await nowhere.exited;
  t.match(exit, { code: null, signal: null, spawnError: /^cannot create the engine's cgroup \/nonexistent\/cgroup\/skilld-job-unit-nowhere-1: ENOENT/ });
  t.equal(await nowhere.stop(), exit, 'a stop has nothing to do');
  t.equal(nowhere.write('reply\n'), false, 'it takes no input');
  const missing = createSpawner(systemClock, new CgroupContainment('/nonexistent/cgroup', systemClock, 200)).spawn({ ...request, argv: ['no-such-engine-here', '--help'] });
  t.match(await missing.exited, { spawnError: 'ENOENT' }, 'looked up along PATH, before any cgroup');
});
