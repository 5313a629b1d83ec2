// P4 Waiting at scale: 200 sticky jobs waiting with live fake processes (they hold their slots)
// plus 1,000 resumable jobs waiting (no process, no slot). Measures the daemon's RSS, its CPU
// while everything waits, and jobs/reply → `running` latency (reply sent → status_changed to
// running received by a subscribed client), against the same daemon idle before the load
// (RSS, CPU) and the daemon/ping round trip on the loaded daemon (reply latency).
//
// gemini is configured as the sticky engine (its fake's live ACP mode; FAKE_ENGINE_NO_RESUME,
// profile forced to sticky_process) and codex as the resumable one (profile forced to resumable), so no
// probe runs. max_concurrent is sticky + 10: the sticky jobs hold 200 slots, 10 serve the turns
// of the resumable ones.
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { engineIn, measureCpu, processAlive } from './lib/proc.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';
import { nowMs, range, runPool, sleep } from './lib/util.js';

export const STICKY_ENV = { FAKE_ENGINE_NO_RESUME: '1' };

const SPARE_SLOTS = 10;

export const p4: Benchmark = {
  id: 'P4',
  title: 'many waiting jobs: memory, idle CPU, reply latency',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick ? { sticky: 5, resumable: 10, replies: 4, windowMs: 1000, pings: 100 } : { sticky: 200, resumable: 1000, replies: 100, windowMs: 5000, pings: 500 };
    const dir = await ctx.tempDir('daemon');
    const daemon = await BenchDaemon.start({
      dir,
      config: { max_concurrent: sizes.sticky + SPARE_SLOTS, max_queue: 10_000 },
      engines: { gemini: { env: STICKY_ENV, profile: 'sticky_process' }, codex: { profile: 'resumable' } },
    });
    try {
      const client = await daemon.client();
      const hub = await EventHub.attach(await daemon.client());
      await sleep(1000);
      const idleRss = daemon.sample().rssKb;
      const idleCpu = await measureCpu(daemon.pid, sizes.windowMs);
      r.info(`idle daemon: RSS ${fmt(idleRss / 1024)} MiB, CPU ${fmt(idleCpu.percent)} % of a core over ${fmt(idleCpu.windowMs / 1000)} s`);

      const waitingJob = async (engine: 'gemini' | 'codex'): Promise<Job> => {
        const job = await client.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'g' } } });
        await hub.waitStatus(job.job_id, ['waiting_user']);
        return job;
      };
      let t0 = performance.now();
      const sticky = await runPool(range(sizes.sticky), 16, () => waitingJob('gemini'));
      r.info(`${sizes.sticky} sticky jobs waiting after ${fmt((performance.now() - t0) / 1000)} s`);
      t0 = performance.now();
      const resumable = await runPool(range(sizes.resumable), 40, () => waitingJob('codex'));
      r.info(`${sizes.resumable} resumable jobs waiting after ${fmt((performance.now() - t0) / 1000)} s`);

      const status = await client.request<{ jobs: Record<string, number>; slots: { used: number; max: number } }>('daemon/status');
      let alive = 0;
      for (const job of sticky) {
        const pid = engineIn(join(daemon.stateDir, 'runs', job.job_id, 'workspace'));
        if (pid !== null && processAlive(pid)) alive += 1;
      }
      const stateBytes = ((await stat(join(daemon.stateDir, 'state.json')).catch(() => null))?.size ?? 0) + ((await stat(join(daemon.stateDir, 'state.wal')).catch(() => null))?.size ?? 0);
      r.info(`daemon/status: ${status.jobs['waiting_user']} waiting_user, slots ${status.slots.used}/${status.slots.max}; live sticky engine processes ${alive}/${sticky.length}; state.json ${fmt(stateBytes / 1024)} KiB (snapshot + journal)`);
      if (status.jobs['waiting_user'] !== sizes.sticky + sizes.resumable) throw new Error(`expected ${sizes.sticky + sizes.resumable} waiting jobs, daemon/status says ${status.jobs['waiting_user']}`);

      await sleep(1000);
      const loaded = daemon.sample();
      const cpu = await measureCpu(daemon.pid, sizes.windowMs);
      r.info(`loaded daemon: RSS ${fmt(loaded.rssKb / 1024)} MiB (peak ${fmt(loaded.hwmKb / 1024)} MiB), CPU ${fmt(cpu.cpuMs)} ms over ${fmt(cpu.windowMs / 1000)} s`);
      r.check({ metric: `daemon RSS with ${sizes.sticky} sticky + ${sizes.resumable} resumable waiting`, value: loaded.rssKb / 1024, unit: 'MiB', baseline: idleRss / 1024, baselineLabel: 'idle daemon', target: { kind: 'value<=', limit: 200 } });
      r.check({ metric: `daemon CPU while all wait (${fmt(cpu.windowMs / 1000)} s)`, value: cpu.percent, unit: '% of a core', baseline: idleCpu.percent, baselineLabel: 'idle daemon', target: { kind: 'value<=', limit: 1 } });

      const pings: number[] = [];
      for (let i = 0; i < sizes.pings; i += 1) {
        const p0 = performance.now();
        await client.request('daemon/ping');
        pings.push(performance.now() - p0);
      }
      const ping = summarize(pings);
      r.info(`daemon/ping on the loaded daemon: ${fmtSummary(ping)}`);

      // Replies one at a time, alternating sticky and resumable; each job is left to finish before the next reply.
      const latency = { sticky: [] as number[], resumable: [] as number[] };
      const answered: number[] = [];
      for (let i = 0; i < sizes.replies; i += 1) {
        const kind = i % 2 === 0 ? 'sticky' : 'resumable';
        const job = (kind === 'sticky' ? sticky : resumable)[Math.floor(i / 2)];
        if (job === undefined) break;
        const from = hub.mark(job.job_id);
        const t = nowMs();
        await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'Paris' });
        answered.push(nowMs() - t);
        const running = await hub.waitStatus(job.job_id, ['running'], { from });
        latency[kind].push(running.at - t);
        await hub.waitStatus(job.job_id, ['succeeded'], { from });
      }
      const all = summarize([...latency.sticky, ...latency.resumable]);
      r.info(`jobs/reply answered ${fmtSummary(summarize(answered))}`);
      r.info(`reply → running, sticky:    ${fmtSummary(summarize(latency.sticky))}`);
      r.info(`reply → running, resumable: ${fmtSummary(summarize(latency.resumable))}`);
      r.check({ metric: 'jobs/reply → running p99', value: all.p99, unit: 'ms', baseline: ping.p99, baselineLabel: 'ping p99 (loaded)', target: { kind: 'value<=', limit: 20 } });
      if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      await daemon.stop();
    }
  },
};
