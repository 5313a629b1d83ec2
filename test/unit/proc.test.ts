import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { JOB_MARK, isSameProcess, listProcesses, markOf, readStat } from '../../daemon/process/proc.js';
import { belongingOf, stopAll } from '../../daemon/process/stop.js';
import { FakeClock } from '../helpers/fake-clock.js';

/** A process that idles until stopped, started with exactly `env`. */
async function idle(env: Record<string, string>, options: { ignoreTerm?: boolean } = {}): Promise<ChildProcess> {
  const code = `${options.ignoreTerm === true ? "process.on('SIGTERM', () => {});" : ''} process.stdout.write('up'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  await once(child.stdout as NodeJS.ReadableStream, 'data');
  return child;
}

t.test('markOf reads the job mark, never a look-alike inside another value', async (t) => {
  const marked = await idle({ DECOY: `x${JOB_MARK}=job-wrong`, [JOB_MARK]: 'job-right' });
  const decoyOnly = await idle({ DECOY: `x${JOB_MARK}=job-wrong` });
  t.teardown(() => {
    marked.kill('SIGKILL');
    decoyOnly.kill('SIGKILL');
  });
  t.equal(markOf(marked.pid as number), 'job-right');
  t.equal(markOf(decoyOnly.pid as number), null, 'only a variable of its own counts');
  t.equal(markOf(2 ** 22 + 7), null, 'a pid that does not exist has no mark');
});

t.test('belongingOf finds marked processes born after a point, and never this process', async (t) => {
  const before = await idle({ [JOB_MARK]: 'job-a' });
  const stat = readStat(before.pid as number);
  const after = await idle({ [JOB_MARK]: 'job-a' });
  const other = await idle({ [JOB_MARK]: 'job-b' });
  t.teardown(() => {
    for (const child of [before, after, other]) child.kill('SIGKILL');
  });
  const pids = (bornAfter: number, groups: number[] = []): number[] => belongingOf(listProcesses(), { groups, owns: (m) => m === 'job-a', bornAfter }).map((p) => p.pid);
  t.same(pids(0).sort(), [before.pid, after.pid].sort(), 'both of job-a, not job-b');
  t.same(pids(Number(stat?.startTime) + 1), [after.pid], 'one born before the point is not read');
  const ownGroup = readStat(process.pid)?.pgid as number;
  t.notOk(pids(0, [ownGroup]).includes(process.pid), 'not this process, even as a member of a group being stopped');
});

t.test('stopAll ends only when a process that ignores SIGTERM is gone, and SIGKILL comes only at the end of the grace period', async (t) => {
  const stubborn = await idle({ [JOB_MARK]: 'job-c' }, { ignoreTerm: true });
  const stat = readStat(stubborn.pid as number);
  if (stat === null) throw new Error('the process is gone already');
  const clock = new FakeClock();
  let finished = false;
  const stopping = stopAll([stat], { groups: [], owns: () => false, bornAfter: 0 }, clock, 200).then(() => (finished = true));
  const exited = once(stubborn, 'exit');
  // It got SIGTERM and ignores it: time up to the end of the grace period changes nothing.
  for (let ms = 0; ms < 180; ms += 20) {
    clock.advance(20);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.ok(isSameProcess(stat.pid, stat.startTime), 'still alive before the grace period ends');
  t.notOk(finished, 'and the stop is still under way');
  clock.advance(20);
  const [, signal] = (await exited) as [number | null, string | null];
  t.equal(signal, 'SIGKILL', 'killed once the grace period ended');
  while (!finished) {
    clock.advance(20);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await stopping;
  t.notOk(isSameProcess(stat.pid, stat.startTime), 'it is gone');
});

t.test('stopAll looks for newcomers while a spared process waits for them: a tool born after the stop began gets its SIGTERM long before the grace period ends', async (t) => {
  // The spared process stands for a sandbox's outer process: it ends by itself once the process
  // whose pid it is given has ended, and gets no SIGTERM of its own.
  const waiter = `process.stdin.once('data', (d) => { const pid = Number(String(d)); setInterval(() => { try { process.kill(pid, 0); } catch { process.exit(0); } }, 20); }); process.stdout.write('up');`;
  const spared = spawn(process.execPath, ['-e', waiter], { env: {}, stdio: ['pipe', 'pipe', 'ignore'] });
  await once(spared.stdout, 'data');
  const stat = readStat(spared.pid as number);
  if (stat === null) throw new Error('the spared process is gone already');
  const clock = new FakeClock();
  const grace = 60_000;
  let finished = false;
  const stopping = stopAll([stat], { groups: [], owns: (mark) => mark === 'job-n', bornAfter: Number(stat.startTime), spared: stat.pid }, clock, grace).then(() => (finished = true));
  // A tool of the job, born after the stop began; the spared process waits for it.
  const tool = await idle({ [JOB_MARK]: 'job-n' });
  const toolExit = once(tool, 'exit');
  spared.stdin.end(String(tool.pid));
  let elapsed = 0;
  while (!finished && elapsed < grace - 1000) {
    clock.advance(20);
    elapsed += 20;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.ok(finished, 'the stop ended before the grace period did');
  const [, signal] = (await toolExit) as [number | null, string | null];
  t.equal(signal, 'SIGTERM', 'the tool was stopped by a SIGTERM');
  await stopping;
  t.notOk(isSameProcess(stat.pid, stat.startTime), 'the spared process ended by itself');
});
