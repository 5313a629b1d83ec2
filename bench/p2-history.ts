// P2 History: jobs/create and jobs/get latency with 0, 1k, 10k and 50k finished jobs already in
// the store, and start-up time (spawn → "skilld ready") with the largest history and 200 skills.
//
// The history is written as <state_dir>/jobs-finished.ndjson before each daemon starts. One
// daemon per history size runs at the same time, and requests go round robin across them, so
// that anything else happening on the machine affects every size alike. Each daemon has one
// slot, held by a job that hangs: every created job stays queued (no engine starts to disturb
// the measurement) and is then canceled (untimed), so the active state stays the same size and
// only the history differs between the daemons.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RpcClient } from '../rpc/client.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { holdTheSlot, timedCreate } from './lib/queued-creates.js';
import { writeFinishedLog, writeSkills } from './lib/fixtures.js';
import { fmt, fmtSummary, median, summarize } from './lib/stats.js';

interface Level {
  size: number;
  dir: string;
  ids: string[];
  startups: number[];
  daemon: BenchDaemon | null;
  client: RpcClient | null;
  create: number[];
  get: number[];
  created: string[];
  rssKb: number;
}

export const p2: Benchmark = {
  id: 'P2',
  title: 'latency and start-up as the history of finished jobs grows',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick
      ? { levels: [0, 1000, 5000], skills: 20, creates: 40, gets: 300, startups: 1, warm: 10 }
      : { levels: [0, 1000, 10_000, 50_000], skills: 200, creates: 300, gets: 3000, startups: 3, warm: 30 };
    const skillsDir = await ctx.tempDir('skills');
    const skillIds = await writeSkills(skillsDir, sizes.skills);
    const levels: Level[] = [];
    for (const size of sizes.levels) {
      const dir = await ctx.tempDir(`h${size}`);
      const t0 = performance.now();
      await mkdir(join(dir, 'state'), { recursive: true });
      const ids = await writeFinishedLog(join(dir, 'state', 'jobs-finished.ndjson'), size, skillIds);
      if (size > 0) r.info(`history ${size}: wrote ${size} finished jobs in ${fmt(performance.now() - t0)} ms`);
      levels.push({ size, dir, ids, startups: [], daemon: null, client: null, create: [], get: [], created: [], rssKb: Number.NaN });
    }
    const launch = (level: Level): Promise<BenchDaemon> =>
      BenchDaemon.start({ dir: level.dir, skillsDirs: [skillsDir], config: { max_concurrent: 1, max_queue: 100_000, retention: { max_age: null } } });
    try {
      // Start-up, one daemon at a time (the largest history several times), before any load.
      for (const level of levels) {
        const runs = level === levels[levels.length - 1] ? sizes.startups : 1;
        for (let i = 0; i < runs; i += 1) {
          if (level.daemon !== null) await level.daemon.stop();
          level.daemon = await launch(level);
          level.startups.push(level.daemon.readyMs);
        }
        level.rssKb = level.daemon?.sample().rssKb ?? Number.NaN;
      }
      for (const level of levels) level.client = await holdTheSlot(level.daemon as BenchDaemon);
      const clients = levels.map((level) => level.client as RpcClient);
      for (let i = 0; i < sizes.warm; i += 1) {
        for (const client of clients) await client.request('jobs/get', { job_id: await timedCreate(client, []) });
      }
      // jobs/create, round robin over the history sizes (rotating who goes first).
      for (let i = 0; i < sizes.creates; i += 1) {
        for (let k = 0; k < levels.length; k += 1) {
          const level = levels[(i + k) % levels.length] as Level;
          level.created.push(await timedCreate(level.client as RpcClient, level.create));
        }
      }
      // jobs/get of random jobs of the history (of the created ones when there is none).
      for (let i = 0; i < sizes.gets; i += 1) {
        for (let k = 0; k < levels.length; k += 1) {
          const level = levels[(i + k) % levels.length] as Level;
          const pool = level.ids.length > 0 ? level.ids : level.created;
          const id = pool[Math.floor(Math.random() * pool.length)] as string;
          const t0 = performance.now();
          await (level.client as RpcClient).request('jobs/get', { job_id: id });
          level.get.push(performance.now() - t0);
        }
      }

      for (const level of levels) {
        r.info(`history ${String(level.size).padStart(6)}: start-up ${level.startups.map((x) => fmt(x)).join(', ')} ms; RSS after start ${fmt(level.rssKb / 1024)} MiB`);
        r.info(`history ${String(level.size).padStart(6)}: jobs/create ${fmtSummary(summarize(level.create))}`);
        r.info(`history ${String(level.size).padStart(6)}: jobs/get    ${fmtSummary(summarize(level.get))}`);
      }
      const base = levels[0] as Level;
      const top = levels[levels.length - 1] as Level;
      const label = `at ${base.size}`;
      r.check({ metric: `jobs/create p99 at ${top.size}`, value: summarize(top.create).p99, unit: 'ms', baseline: summarize(base.create).p99, baselineLabel: label, target: { kind: 'ratio<=', limit: 1.5 } });
      r.check({ metric: `jobs/get p99 at ${top.size}`, value: summarize(top.get).p99, unit: 'ms', baseline: summarize(base.get).p99, baselineLabel: label, target: { kind: 'ratio<=', limit: 1.5 } });
      r.check({
        metric: `start-up with ${top.size} finished jobs and ${sizes.skills} skills (median of ${top.startups.length})`,
        value: median(top.startups),
        unit: 'ms',
        baseline: median(base.startups),
        baselineLabel: `${base.size} jobs`,
        target: { kind: 'value<=', limit: 2000 },
      });
      for (const level of levels) if ((level.daemon?.errorLines.length ?? 0) > 0) r.info(`daemon (history ${level.size}) logged errors:\n${level.daemon?.errorLines.join('\n')}`);
    } finally {
      for (const level of levels) await level.daemon?.stop();
    }
  },
};
