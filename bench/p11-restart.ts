// P11 Restart: what keeping engines across daemon restarts costs (docs/restarts.md): the memory of
// a keeper beside its engine, and how long a daemon takes to answer when it takes up live sessions
// and running turns.
//
// Method. One daemon without a sandbox (where the keeper is a shell; in a sandbox it is the
// sandbox's outer process, which P10 measures) holds 200 live sessions waiting for a reply (the
// fake Gemini over ACP) and 50 one-shot turns (`release_file`). The resident and proportional sets
// of the turns' keepers are read from /proc. The daemon is SIGKILLed and started again in the same
// folder; start → ready (the socket answers) is compared with its first start on an empty state,
// in the same run. Then every turn is released and must succeed, and 20 live sessions get their
// reply and must succeed: each was taken up, none was lost.
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { range, runPool, sleep } from './lib/util.js';

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
  title: 'restarts: a keeper\'s memory, and start → ready when running turns and live sessions are taken up',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick ? { running: 5, live: 5, replies: 3 } : { running: 50, live: 200, replies: 20 };
    const dir = await ctx.tempDir('restart');
    const engines = { gemini: { env: { FAKE_ENGINE_NO_RESUME: '1' }, profile: 'sticky_process' } };
    const config = { max_concurrent: sizes.running + sizes.live, sandbox: 'off', engines_on_stop: 'keep' };
    const first = await BenchDaemon.start({ dir, config, engines });
    const emptyReadyMs = first.readyMs;
    const client = await first.client();
    const hub = await EventHub.attach(await first.client());
    const live = await runPool(range(sizes.live), 16, async () => {
      const job = await client.request<Job>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'g' } } });
      await hub.waitStatus(job.job_id, ['waiting_user']);
      return job;
    });
    const jobs: Job[] = [];
    for (let i = 0; i < sizes.running; i += 1) jobs.push(await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok', release_file: 'release' } }));
    const runDirs = jobs.map((job) => join(first.stateDir, 'runs', job.job_id));
    const keepers = await Promise.all(runDirs.map(keeperOf));
    // The restart comes when the engines are at work, as on a server: each turn has begun (its
    // engine printed), not while 50 engines are still starting up on two cores.
    for (let i = 0; i < 3000 && jobs.some((job) => hub.firstOutputAt(job.job_id) === undefined); i += 1) await sleep(20);
    await sleep(1000);
    const memory = keepers.map(memoryOf);
    const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
    r.info(`keepers: ${sizes.running}, resident ${(mean(memory.map((m) => m.rss)) / KIB_PER_MIB).toFixed(2)} MiB each, proportional ${(mean(memory.map((m) => m.pss)) / KIB_PER_MIB).toFixed(2)} MiB each`);
    r.check({ metric: 'memory of a keeper beside its engine (resident, a shell)', value: mean(memory.map((m) => m.rss)) / KIB_PER_MIB, unit: 'MiB', baseline: null, baselineLabel: '—', target: { kind: 'value<=', limit: 2 } });

    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    // The next daemon stops what it holds when the benchmark ends.
    const again = await BenchDaemon.start({ dir, config: { ...config, engines_on_stop: 'stop' }, engines });
    const answering = performance.now();
    try {
      // The socket answers once recovery has decided; a request naming a job waits for that job's take-up.
      const probe = await again.client();
      await Promise.all([...live, ...jobs].map((job) => probe.request('jobs/get', { job_id: job.job_id })));
      const everyJobMs = again.readyMs + (performance.now() - answering);
      r.check({
        metric: `start → ready, taking up ${sizes.live} live sessions and ${sizes.running} running turns`,
        value: again.readyMs,
        unit: 'ms',
        baseline: emptyReadyMs,
        baselineLabel: "the same daemon's first start, on an empty state",
        target: { kind: 'value<=', limit: 2000 },
      });
      r.info(`taking them up added ${(again.readyMs - emptyReadyMs).toFixed(0)} ms to start → ready`);
      r.info(`start → every one of the ${sizes.live + sizes.running} jobs taken up (a request naming it answered): ${everyJobMs.toFixed(0)} ms`);
      let recovered: string | undefined;
      for (let i = 0; i < 250 && recovered === undefined; i += 1) {
        recovered = again.diagnostics().split('\n').find((line) => line.includes('"recovered"'));
        if (recovered === undefined) await sleep(20);
      }
      if (recovered !== undefined) r.info(`the daemon's own account: ${recovered.replace(/^.*?"active"/, '{"active"').replace(/,"msg".*$/, '}')}`);
      const c = await again.client();
      const after = await EventHub.attach(await again.client());
      const status = await c.request<{ jobs: Record<string, number> }>('daemon/status');
      if (status.jobs['running'] !== sizes.running || status.jobs['waiting_user'] !== sizes.live) throw new Error(`expected ${sizes.running} running and ${sizes.live} waiting after the restart, found ${JSON.stringify(status.jobs)}`);
      await Promise.all(runDirs.map((run) => writeFile(join(run, 'workspace', 'release'), '')));
      await Promise.all(jobs.map((job) => after.waitStatus(job.job_id, ['succeeded'])));
      const answered = live.slice(0, sizes.replies);
      for (const job of answered) await c.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'after the restart' });
      await Promise.all(answered.map((job) => after.waitStatus(job.job_id, ['succeeded'])));
      r.info(`all ${sizes.running} turns taken up succeeded, and ${sizes.replies} live sessions taken up took their replies and succeeded`);
      if (again.errorLines.length > 0) r.info(`daemon logged errors:\n${again.errorLines.join('\n')}`);
    } finally {
      await again.stop();
    }
  },
};
