// P12 Retention: a year of churn costs nothing once retention has removed it (docs/retention.md).
// Two state folders: one that only ever held N finished jobs, and one through which 10 N finished
// jobs went while retention (max_jobs N) removed the oldest as it does in the background: the
// files store's own code appends every job (group commit) and `Retention.round` removes them, with
// its tombstones and rewrites of the finished log. A daemon is then started on each (start-up,
// median of 3, one at a time), and both serve `jobs/create` round robin as in P2; finally the
// churned daemon serves `jobs/create` while `jobs/prune` removes a tenth of its jobs (no create
// may wait long behind it: p99 within 100 ms).
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ORPHAN_GRACE_MS, Retention } from '../daemon/jobs/retention.js';
import { createLogger } from '../daemon/base/logger.js';
import { systemClock } from '../daemon/base/clock.js';
import { LowdbStore } from '../daemon/store/lowdb-store.js';
import type { RpcClient } from '../rpc/client.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { holdTheSlot, timedCreate } from './lib/queued-creates.js';
import { finishedJob, writeFinishedLog, writeSkills } from './lib/fixtures.js';
import { fmt, fmtSummary, median, summarize } from './lib/stats.js';

interface Side {
  name: string;
  dir: string;
  startups: number[];
  daemon: BenchDaemon | null;
  client: RpcClient | null;
  create: number[];
}

/** Jobs handed to the store at once: the group commit writes them together, as a busy daemon's finishing jobs are. */
const WAVE = 1000;

/** Puts `total` finished jobs through the files store in `dir`, with a retention round after every `every` of them. */
async function churn(dir: string, total: number, keep: number, every: number, skillIds: readonly string[]): Promise<{ removed: number; rounds: number }> {
  await mkdir(join(dir, 'runs'), { recursive: true });
  const store = await LowdbStore.open(dir, () => new Date());
  const retention = new Retention({
    store, runsDir: join(dir, 'runs'), clock: systemClock, logger: createLogger('silent'),
    policy: { max_age_ms: null, max_jobs: keep, interval_ms: 3_600_000 },
    settled: async () => undefined,
    closeEvents: async () => undefined,
    orphanGraceMs: ORPHAN_GRACE_MS,
  });
  let removed = 0;
  let rounds = 0;
  const now = Date.now();
  try {
    for (let done = 0; done < total; ) {
      const wave = Math.min(WAVE, total - done);
      await Promise.all(Array.from({ length: wave }, (_, k) => store.putJob(finishedJob(done + k, total, skillIds, now))));
      done += wave;
      if (done % every === 0 || done === total) {
        removed += (await retention.round()).count;
        rounds += 1;
      }
    }
  } finally {
    await store.close();
  }
  return { removed, rounds };
}

export const p12: Benchmark = {
  id: 'P12',
  title: 'start-up and jobs/create after a year of churn removed by retention, against a store that only held what is kept',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick
      ? { kept: 2000, created: 20_000, every: 4000, skills: 10, creates: 40, startups: 1, warm: 10, during: 40 }
      : { kept: 50_000, created: 500_000, every: 10_000, skills: 200, creates: 300, startups: 3, warm: 30, during: 200 };
    const skillsDir = await ctx.tempDir('skills');
    const skillIds = await writeSkills(skillsDir, sizes.skills);
    const fresh: Side = { name: `held ${sizes.kept}`, dir: await ctx.tempDir('fresh'), startups: [], daemon: null, client: null, create: [] };
    const churned: Side = { name: `${sizes.created} through, ${sizes.kept} kept`, dir: await ctx.tempDir('churned'), startups: [], daemon: null, client: null, create: [] };
    await mkdir(join(fresh.dir, 'state'), { recursive: true });
    await writeFinishedLog(join(fresh.dir, 'state', 'jobs-finished.ndjson'), sizes.kept, skillIds);
    const t0 = performance.now();
    const { removed, rounds } = await churn(join(churned.dir, 'state'), sizes.created, sizes.kept, sizes.every, skillIds);
    r.info(`churn: ${sizes.created} finished jobs put through the files store, ${removed} removed by ${rounds} retention rounds, in ${fmt((performance.now() - t0) / 1000)} s`);
    for (const side of [fresh, churned]) {
      const bytes = (await stat(join(side.dir, 'state', 'jobs-finished.ndjson'))).size;
      r.info(`${side.name}: jobs-finished.ndjson ${fmt(bytes / 2 ** 20)} MiB`);
    }
    // Retention stays out of the way while they are measured: the policy keeps every job.
    const launch = (side: Side): Promise<BenchDaemon> =>
      BenchDaemon.start({ dir: side.dir, skillsDirs: [skillsDir], config: { max_concurrent: 1, max_queue: 100_000, retention: { max_age: null } } });
    const sides = [fresh, churned];
    try {
      for (let i = 0; i < sizes.startups; i += 1) {
        for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
          await side.daemon?.stop();
          side.daemon = await launch(side);
          side.startups.push(side.daemon.readyMs);
        }
      }
      for (const side of sides) side.client = await holdTheSlot(side.daemon as BenchDaemon);
      const createOnce = (side: Side, into: number[]): Promise<string> => timedCreate(side.client as RpcClient, into);
      for (let i = 0; i < sizes.warm; i += 1) for (const side of sides) await createOnce(side, []);
      for (let i = 0; i < sizes.creates; i += 1) for (let k = 0; k < sides.length; k += 1) await createOnce(sides[(i + k) % sides.length] as Side, (sides[(i + k) % sides.length] as Side).create);
      for (const side of sides) {
        r.info(`${side.name}: start-up ${side.startups.map((x) => fmt(x)).join(', ')} ms; RSS ${fmt((side.daemon?.sample().rssKb ?? Number.NaN) / 1024)} MiB`);
        r.info(`${side.name}: jobs/create ${fmtSummary(summarize(side.create))}`);
      }
      r.check({ metric: `start-up after ${sizes.created} jobs through, ${sizes.kept} kept (median of ${sizes.startups})`, value: median(churned.startups), unit: 'ms', baseline: median(fresh.startups), baselineLabel: `a store that held ${sizes.kept}`, target: { kind: 'ratio<=', limit: 1.2 } });
      r.check({ metric: `jobs/create p99 after ${sizes.created} jobs through, ${sizes.kept} kept`, value: summarize(churned.create).p99, unit: 'ms', baseline: summarize(fresh.create).p99, baselineLabel: `a store that held ${sizes.kept}`, target: { kind: 'ratio<=', limit: 1.2 } });

      // jobs/create while a prune removes a tenth of the jobs, against jobs/create just before it.
      const client = churned.client as RpcClient;
      const before: number[] = [];
      for (let i = 0; i < sizes.during; i += 1) await createOnce(churned, before);
      const during: number[] = [];
      // The kept jobs were created over the last (kept / created) of the 30 days: the oldest tenth of them.
      const olderThanSec = Math.floor(30 * 24 * 3600 * (sizes.kept / sizes.created) * 0.9);
      let pruned = false;
      const pruning = client.request<{ count: number }>('jobs/prune', { older_than_sec: olderThanSec }).finally(() => (pruned = true));
      while (!pruned && during.length < 10 * sizes.during) await createOnce(churned, during);
      const answer = await pruning;
      r.info(`jobs/prune removed ${answer.count} jobs while ${during.length} jobs/create ran: ${fmtSummary(summarize(during))}; just before: ${fmtSummary(summarize(before))}`);
      // The removal's own writes are synced, and share the disk with each create's: what counts is that no request waits long behind it.
      r.check({ metric: `jobs/create p99 while jobs/prune removes ${answer.count} jobs`, value: summarize(during).p99, unit: 'ms', baseline: summarize(before).p99, baselineLabel: 'just before', target: { kind: 'value<=', limit: 100 } });
      for (const side of sides) if ((side.daemon?.errorLines.length ?? 0) > 0) r.info(`daemon (${side.name}) logged errors:\n${side.daemon?.errorLines.join('\n')}`);
    } finally {
      for (const side of sides) await side.daemon?.stop();
    }
  },
};
