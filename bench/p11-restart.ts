// P11 Restart: what keeping engines across daemon restarts costs (docs/restarts.md): the memory of
// a keeper beside its engine, and how long a daemon takes to answer when it takes up running turns.
//
// Method. One daemon without a sandbox (where the keeper is a shell; in a sandbox it is the
// sandbox's outer process, which P10 measures) holds N one-shot turns (`release_file`). The
// resident and proportional sets of their keepers are read from /proc. The daemon is SIGKILLed and
// started again in the same folder; start → ready (the socket answers) is compared with its first
// start on an empty state, in the same run. Then every turn is released and must succeed: each
// was taken up, none was lost.
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { sleep } from './lib/util.js';

const KIB_PER_MIB = 1024;

/** The keeper's pid, once the fake engine it started has written its own. */
async function keeperOf(runDir: string): Promise<number> {
  for (let i = 0; i < 1000; i += 1) {
    const started = await readFile(join(runDir, 'workspace', '.fake-engine', 'pid'), 'utf8').catch(() => '');
    const record = await readFile(join(runDir, 'engine', 'keeper.json'), 'utf8').catch(() => '');
    if (started !== '' && record !== '') return (JSON.parse(record) as { pid: number }).pid;
    await sleep(10);
  }
  throw new Error(`no engine started in ${runDir}`);
}

/** Resident and proportional set sizes of a process, in KiB. */
function memoryOf(pid: number): { rss: number; pss: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rss: field('Rss'), pss: field('Pss') };
}

export const p11: Benchmark = {
  id: 'P11',
  title: 'restarts: a keeper\'s memory, and start → ready when running turns are taken up',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const n = ctx.quick ? 5 : 50;
    const dir = await ctx.tempDir('restart');
    const config = { max_concurrent: n, sandbox: 'off', engines_on_stop: 'keep' };
    const first = await BenchDaemon.start({ dir, config });
    const emptyReadyMs = first.readyMs;
    const client = await first.client();
    const jobs: Job[] = [];
    for (let i = 0; i < n; i += 1) jobs.push(await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok', release_file: 'release' } }));
    const runDirs = jobs.map((job) => join(first.stateDir, 'runs', job.job_id));
    const keepers = await Promise.all(runDirs.map(keeperOf));
    const memory = keepers.map(memoryOf);
    const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
    r.info(`keepers: ${n}, resident ${(mean(memory.map((m) => m.rss)) / KIB_PER_MIB).toFixed(2)} MiB each, proportional ${(mean(memory.map((m) => m.pss)) / KIB_PER_MIB).toFixed(2)} MiB each`);
    r.check({ metric: 'memory of a keeper beside its engine (resident, a shell)', value: mean(memory.map((m) => m.rss)) / KIB_PER_MIB, unit: 'MiB', baseline: null, baselineLabel: '—', target: { kind: 'value<=', limit: 2 } });

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const again = await BenchDaemon.start({ dir, config });
    try {
      r.check({
        metric: `start → ready, taking up ${n} running turns`,
        value: again.readyMs,
        unit: 'ms',
        baseline: emptyReadyMs,
        baselineLabel: "the same daemon's first start, on an empty state",
        target: { kind: 'value<=', limit: 2000 },
      });
      r.info(`taking up ${n} running turns added ${(again.readyMs - emptyReadyMs).toFixed(0)} ms to start → ready`);
      const hub = await EventHub.attach(await again.client());
      const running = await (await again.client()).request<{ jobs: Record<string, number> }>('daemon/status');
      if (running.jobs['running'] !== n) throw new Error(`expected ${n} running jobs after the restart, found ${JSON.stringify(running.jobs)}`);
      await Promise.all(runDirs.map((run) => writeFile(join(run, 'workspace', 'release'), '')));
      await Promise.all(jobs.map((job) => hub.waitStatus(job.job_id, ['succeeded'])));
      r.info(`all ${n} turns taken up went on and succeeded`);
      if (again.errorLines.length > 0) r.info(`daemon logged errors:\n${again.errorLines.join('\n')}`);
    } finally {
      await again.stop();
    }
  },
};
