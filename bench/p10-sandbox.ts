// P10 Sandbox: what a job's sandbox adds between jobs/create and the engine's first instruction,
// against the same daemon set-up without one, and the memory a sandbox holds beside its engine.
//
// Method. Two daemons, alike but for `sandbox` ("preferred", where the probe passes: an empty
// root, every path opened once and handed over as a descriptor, the engine as another user where
// the daemon is root, the default limits by cgroup where the host has them; "off", and no limits), run
// the same fake codex under `node --import engine-stamp.js`, whose stamp records when Node started
// (`performance.timeOrigin`, epoch ms: the same clock inside a sandbox). Jobs alternate between
// them; create → start = stamp.start − the time jobs/create was sent. Sandbox-added = p50(sandbox)
// − p50(none). Memory: a sandboxed job holds its turn (`release_file`) while the resident sets of
// its sandbox's own processes (bubblewrap's outer process and the namespace's first process) are
// read, then it is released.
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { listProcesses } from '../daemon/process/proc.js';
import { runShort } from '../daemon/process/run-short.js';
import { BWRAP } from '../daemon/sandbox/bwrap.js';
import { probeHere } from '../daemon/sandbox/probe.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { fakeEngine, libModuleUrl } from './lib/paths.js';
import { sampleProc } from './lib/proc.js';
import { fmtSummary, summarize } from './lib/stats.js';
import { benchEnv, nowMs, sleep } from './lib/util.js';

const KIB_PER_MIB = 1024;

async function stampStart(workspace: string): Promise<number> {
  const first = (await readFile(join(workspace, '.bench-stamp.ndjson'), 'utf8')).split('\n')[0];
  if (first === undefined || first === '') throw new Error(`no stamp in ${workspace}`);
  return (JSON.parse(first) as { start: number }).start;
}

/** One job through `daemon`: create → engine started, in ms. */
async function createToStart(daemon: BenchDaemon, hub: EventHub): Promise<number> {
  const client = await daemon.client();
  const t0 = nowMs();
  const job = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } });
  await hub.waitStatus(job.job_id, ['succeeded']);
  return (await stampStart(join(daemon.stateDir, 'runs', job.job_id, 'workspace'))) - t0;
}

/** The resident memory, in KiB, of the sandbox's own processes of a job whose turn is held. */
async function sandboxMemory(daemon: BenchDaemon, hub: EventHub): Promise<number> {
  const client = await daemon.client();
  const job = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok', release_file: 'release' } });
  const workspace = join(daemon.stateDir, 'runs', job.job_id, 'workspace');
  // The stamp is written at exit: the fake engine's pid file says it has started.
  for (let i = 0; i < 500; i += 1) {
    if (await readFile(join(workspace, '.fake-engine', 'pid'), 'utf8').catch(() => '') !== '') break;
    await sleep(10);
  }
  // The sandbox's two processes carry the job's mark: the namespace's first process is forked from the outer one.
  const own = listProcesses().filter((p) => commandLine(p.pid).startsWith(`${BWRAP}\0`) && marked(p.pid, job.job_id));
  const kb = own.reduce((sum, p) => sum + (sampleProc(p.pid)?.rssKb ?? 0), 0);
  await writeFile(join(workspace, 'release'), '');
  await hub.waitStatus(job.job_id, ['succeeded']);
  if (own.length !== 2) throw new Error(`expected the sandbox's 2 processes, found ${own.length}`);
  return kb;
}

function marked(pid: number, jobId: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`SKILLD_JOB_ID=${jobId}`);
  } catch {
    return false;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

export const p10: Benchmark = {
  id: 'P10',
  title: 'a job\'s sandbox: create → engine start against no sandbox, and its memory',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const probe = await probeHere(runShort, benchEnv());
    if (!probe.available) {
      r.info(`sandbox not measured: ${probe.reason}`);
      return;
    }
    const sizes = ctx.quick ? { warm: 1, samples: 5 } : { warm: 3, samples: 40 };
    const command = [process.execPath, '--import', libModuleUrl('engine-stamp'), fakeEngine('codex')];
    // The sandbox with all it does (an empty root, descriptors opened once, limits by cgroup where
    // the host has them) against none and no limits, the same engine otherwise.
    const start = async (sandbox: string, limits: Record<string, unknown>): Promise<BenchDaemon> => BenchDaemon.start({ dir: await ctx.tempDir(sandbox), engines: { codex: { command } }, config: { max_concurrent: 4, sandbox, limits } });
    const boxed = await start('preferred', {});
    const bare = await start('off', { processes: null, memory: null, workspace: null });
    try {
      const hubs = { boxed: await EventHub.attach(await boxed.client()), bare: await EventHub.attach(await bare.client()) };
      const samples = { boxed: [] as number[], bare: [] as number[] };
      for (let i = 0; i < sizes.warm + sizes.samples; i += 1) {
        const b = await createToStart(boxed, hubs.boxed);
        const n = await createToStart(bare, hubs.bare);
        if (i < sizes.warm) continue;
        samples.boxed.push(b);
        samples.bare.push(n);
      }
      const s = { boxed: summarize(samples.boxed), bare: summarize(samples.bare) };
      r.info(`sandbox: create → engine process started ${fmtSummary(s.boxed)}`);
      r.info(`none:    create → engine process started ${fmtSummary(s.bare)}`);
      r.checkAddedP50('create → engine start, sandbox-added p50', s.boxed, s.bare, { measured: 'with a sandbox', baseline: 'the same daemon without one' });
      const kb = await sandboxMemory(boxed, hubs.boxed);
      r.check({
        metric: 'memory of a sandbox beside its engine (resident, its 2 processes)',
        value: kb / KIB_PER_MIB,
        unit: 'MiB',
        baseline: null,
        baselineLabel: '—',
        target: { kind: 'value<=', limit: 16 },
      });
      for (const daemon of [boxed, bare]) if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      await boxed.stop();
      await bare.stop();
    }
  },
};
