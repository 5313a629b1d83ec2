// P7 Live sessions: for each real engine CLI (the pinned dev dependencies, offline against the
// scripted model server), the time from jobs/reply to the engine's next model request, when the
// reply goes to the job's live process (sticky_process) and when it starts a new process that
// resumes the session (resumable, the cold path), in the same run; and what one live session
// costs while its job waits: the engine's processes' RSS and CPU.
//
// Rounds alternate between the two daemons (one per profile), so that both see the same machine.
// Each round is an interactive job that asks; once it waits and the engine is quiet, the reply is
// sent and the clock stops when the model server receives the turn's first request.
import { join } from 'node:path';
import { makeClaudeHome, makeCodexHome, makeGeminiHome, realEngineBins, type EngineHome } from '../clients/skill-test/engine-homes.js';
import { startModelServer, type ModelReply, type ModelRequest, type ModelServer } from '../clients/skill-test/model-server.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { ROOT } from './lib/paths.js';
import { cpuPercent, processesIn, sampleProc } from './lib/proc.js';
import type { BenchReporter } from './lib/report.js';
import { fmt, fmtSummary, median, summarize } from './lib/stats.js';
import { nowMs, sleep } from './lib/util.js';

const ENGINES = { codex: { home: makeCodexHome, limit: 0.3 }, gemini: { home: makeGeminiHome, limit: 0.1 }, claude: { home: makeClaudeHome, limit: 0.3 } } as const;
type LiveEngine = keyof typeof ENGINES;

/** Asks on the first turn, finishes on the reply. */
function script(request: ModelRequest): ModelReply {
  if (request.prompt?.startsWith('Run the skill') === true) return { text: 'Which city should I use?' };
  return { text: `Done.\n\`\`\`json\n${JSON.stringify({ greeting: 'g', reply: request.prompt, __SKILL_DONE__: true })}\n\`\`\`` };
}

interface Side {
  daemon: BenchDaemon;
  hub: EventHub;
  replyMs: number[];
}

export const p7: Benchmark = {
  id: 'P7',
  title: 'live sessions: reply → next model request, live vs cold resume; a live session at rest',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const bins = realEngineBins(join(ROOT, 'node_modules'));
    const rounds = ctx.quick ? 1 : 5;
    // The smoke run checks that the benchmark runs: one engine's live and cold sides (Codex, the
    // quickest to start) do; the full run measures all three.
    const engines = ctx.quick ? (['codex'] as LiveEngine[]) : (Object.keys(ENGINES) as LiveEngine[]);
    for (const engine of engines) {
      const bin = bins[engine];
      if (bin === null) {
        r.info(`${engine}: the real CLI is not installed in node_modules (npm ci installs it): not measured`);
        continue;
      }
      await measureEngine(ctx, r, engine, bin, rounds);
    }
  },
};

async function measureEngine(ctx: BenchContext, r: BenchReporter, engine: LiveEngine, bin: string, rounds: number): Promise<void> {
  const server = await startModelServer({ script });
  const home: EngineHome = await ENGINES[engine].home(server.url);
  const start = async (profile: 'sticky_process' | 'resumable'): Promise<Side> => {
    const daemon = await BenchDaemon.start({ dir: await ctx.tempDir(`${engine}-${profile}`), engines: { [engine]: { command: [bin], env: home.env, profile } }, config: { kill_grace_ms: 2000 } });
    return { daemon, hub: await EventHub.attach(await daemon.client()), replyMs: [] };
  };
  const live = await start('sticky_process');
  const cold = await start('resumable');
  const idle: Array<{ rssMb: number; cpu: number }> = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const [side, profile] of [[live, 'live'], [cold, 'cold']] as const) {
        const job = await waitingJob(side, engine);
        if (profile === 'live' && round === 0) idle.push(await atRest(join(side.daemon.stateDir, 'runs', job.job_id, 'workspace'), ctx.quick ? 500 : 2000));
        side.replyMs.push(await replyToRequest(side, server, job.job_id));
      }
    }
  } finally {
    await live.daemon.stop();
    await cold.daemon.stop();
    await server.close();
    await home.cleanup();
  }
  const liveMs = summarize(live.replyMs);
  const coldMs = summarize(cold.replyMs);
  r.info(`${engine}: reply → model request, live: ${fmtSummary(liveMs)}`);
  r.info(`${engine}: reply → model request, cold: ${fmtSummary(coldMs)}`);
  r.check({ metric: `${engine} reply → next model request, live session, median`, value: median(live.replyMs), unit: 'ms', baseline: median(cold.replyMs), baselineLabel: 'cold resume', target: { kind: 'ratio<=', limit: ENGINES[engine].limit } });
  for (const { rssMb, cpu } of idle) r.info(`${engine}: one live session at rest: RSS ${fmt(rssMb)} MiB, CPU ${fmt(cpu)} % of a core`);
}

/** An interactive job that has asked and waits, its engine quiet. */
async function waitingJob(side: Side, engine: LiveEngine): Promise<Job> {
  const client = await side.daemon.client();
  const job = await client.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
  await side.hub.waitStatus(job.job_id, ['waiting_user'], { timeoutMs: 120_000 });
  await sleep(200); // the engine settles after its turn (a live one writes its session)
  return job;
}

/** The reply, and the time until the model server receives the turn it starts. */
async function replyToRequest(side: Side, server: ModelServer, jobId: string): Promise<number> {
  const client = await side.daemon.client();
  const since = server.requests.length;
  const t0 = nowMs();
  const next = server.waitForModelRequest(since, 60_000);
  await client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: 'Paris' });
  await next;
  const ms = nowMs() - t0;
  await side.hub.waitFinished(jobId, { timeoutMs: 120_000 });
  return ms;
}

/** The live engine's processes while its job waits: their RSS, and their CPU over `windowMs`. */
async function atRest(workspace: string, windowMs: number): Promise<{ rssMb: number; cpu: number }> {
  const pids = processesIn(workspace);
  const before = pids.map(sampleProc);
  await sleep(windowMs);
  const after = pids.map(sampleProc);
  let rssKb = 0;
  let cpu = 0;
  pids.forEach((_, i) => {
    const a = before[i];
    const b = after[i];
    if (a === null || a === undefined || b === null || b === undefined) return;
    rssKb += b.rssKb;
    cpu += cpuPercent(a, b);
  });
  return { rssMb: rssKb / 1024, cpu };
}
