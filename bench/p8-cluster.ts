// P8 Several hosts on one PostgreSQL (docs/cluster.md): jobs completed per second by one daemon
// and by three, and jobs/create latency on PostgreSQL against the files store, in the same run.
//
// Throughput: the same jobs (the fake engine answers after `delay_ms`, so that a job holds its
// slot rather than the CPU: this machine has two cores for all the daemons) are created round
// robin on the daemons of the cluster, and counted from the first create to the last `finished`
// event, which one subscription on the first daemon hears from every host. Each daemon has the
// same number of slots; three daemons have three times the slots, and the ratio says how much
// of that the shared queue turns into work.
//
// jobs/create: a files daemon and a PostgreSQL daemon side by side, requests alternating between
// them, each daemon's one slot held by a hanging job so that every create stays queued and is then
// canceled (untimed), as in P2.
import { startThrowawayPostgres, type ThrowawayPostgres } from '../test/fixtures/throwaway-postgres.js';
import type { RpcClient } from '../rpc/client.js';
import { onCleanup } from './lib/cleanup.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';
import { nowMs } from './lib/util.js';

interface Sizes {
  jobs: number;
  slots: number;
  delayMs: number;
  creates: number;
  warm: number;
}

const ENGINES = ['codex', 'gemini', 'iflow', 'claude'] as const;

export const p8: Benchmark = {
  id: 'P8',
  title: 'several daemons on one PostgreSQL: jobs per second on 1 and 3 daemons, jobs/create on PostgreSQL and on files',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const started = await startThrowawayPostgres();
    if (typeof started === 'string') throw new Error(`no PostgreSQL to run against: ${started}`);
    const unregister = onCleanup(() => started.stop());
    const sizes: Sizes = ctx.quick
      ? { jobs: 12, slots: 2, delayMs: 200, creates: 20, warm: 5 }
      : { jobs: 150, slots: 2, delayMs: 1000, creates: 300, warm: 30 };
    try {
      const one = await throughput(ctx, started, 1, sizes);
      const three = await throughput(ctx, started, 3, sizes);
      r.check({
        metric: `jobs completed per second, 3 daemons x ${sizes.slots} slots`,
        value: three,
        unit: 'jobs/s',
        baseline: one,
        baselineLabel: '1 daemon',
        target: { kind: 'ratio>=', limit: 2.4 },
        note: `${sizes.jobs} jobs of ${sizes.delayMs} ms each; 3.0 would be every added slot busy`,
      });
      await createLatency(ctx, started, sizes);
    } finally {
      await started.stop();
      unregister();
    }
  },
};

/** Jobs per second of `hosts` daemons sharing one database, from the first create to the last end. */
async function throughput(ctx: BenchContext, postgres: ThrowawayPostgres, hosts: number, sizes: Sizes): Promise<number> {
  const url = await postgres.createDatabase(`p8_${hosts}`);
  const daemons: BenchDaemon[] = [];
  try {
    for (let i = 0; i < hosts; i += 1) {
      daemons.push(await BenchDaemon.start({ dir: await ctx.tempDir(`cluster${hosts}-h${i}`), config: { store: url, host_id: `h${i}`, max_concurrent: sizes.slots, max_queue: 10_000 } }));
    }
    const hub = await EventHub.attach(await (daemons[0] as BenchDaemon).client());
    const clients: RpcClient[] = [];
    for (const daemon of daemons) clients.push(await daemon.client());
    const t0 = nowMs();
    const ids: string[] = [];
    for (let i = 0; i < sizes.jobs; i += 1) {
      const job = await (clients[i % hosts] as RpcClient).request<Job>('jobs/create', {
        skill_id: 'echo-auto', engine: ENGINES[i % ENGINES.length], input: { emit: { greeting: `j${i}` }, delay_ms: sizes.delayMs },
      });
      ids.push(job.job_id);
    }
    let last = t0;
    const failed: string[] = [];
    for (const id of ids) {
      const finished = await hub.waitFinished(id, { timeoutMs: 600_000 });
      last = Math.max(last, finished.at);
      const status = (finished.data as { status?: string } | null)?.status;
      if (status !== 'succeeded') failed.push(`${id}: ${String(status)}`);
    }
    if (failed.length > 0) throw new Error(`${failed.length} jobs did not succeed: ${failed.slice(0, 5).join(', ')}`);
    const perSecond = (sizes.jobs * 1000) / (last - t0);
    const share = daemons.map((daemon) => ids.filter((id) => daemon.ranJob(id)).length);
    ctx.report.info(`${hosts} daemon${hosts === 1 ? '' : 's'}: ${sizes.jobs} jobs in ${fmt(last - t0)} ms, ${fmt(perSecond)} jobs/s; run per daemon ${share.join(' / ')}`);
    return perSecond;
  } finally {
    for (const daemon of daemons) await daemon.stop();
  }
}

/** jobs/create on a files daemon and a PostgreSQL daemon, alternating. */
async function createLatency(ctx: BenchContext, postgres: ThrowawayPostgres, sizes: Sizes): Promise<void> {
  const url = await postgres.createDatabase('p8_create');
  const config = { max_concurrent: 1, max_queue: 100_000 };
  const stores = [
    { name: 'files', daemon: await BenchDaemon.start({ dir: await ctx.tempDir('create-files'), config }), times: [] as number[] },
    { name: 'postgres', daemon: await BenchDaemon.start({ dir: await ctx.tempDir('create-pg'), config: { ...config, store: url, host_id: 'p8' } }), times: [] as number[] },
  ];
  try {
    const clients: RpcClient[] = [];
    for (const store of stores) {
      const client = await store.daemon.client();
      clients.push(client);
      const hub = await EventHub.attach(await store.daemon.client());
      const blocker = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang' } });
      await hub.waitStatus(blocker.job_id, ['running']);
    }
    const create = { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } };
    for (let i = 0; i < sizes.warm + sizes.creates; i += 1) {
      for (let k = 0; k < stores.length; k += 1) {
        const index = (i + k) % stores.length;
        const client = clients[index] as RpcClient;
        const t0 = nowMs();
        const job = await client.request<Job>('jobs/create', create);
        if (i >= sizes.warm) stores[index]?.times.push(nowMs() - t0);
        await client.request('jobs/cancel', { job_id: job.job_id });
      }
    }
    for (const store of stores) ctx.report.info(`jobs/create, ${store.name.padEnd(8)} ${fmtSummary(summarize(store.times))}`);
    const [files, pg] = stores as [(typeof stores)[number], (typeof stores)[number]];
    ctx.report.check({
      metric: 'jobs/create p99 on PostgreSQL',
      value: summarize(pg.times).p99,
      unit: 'ms',
      baseline: summarize(files.times).p99,
      baselineLabel: 'files store',
      target: { kind: 'value<=', limit: 20 },
      note: 'the same bound as a reply (P4)',
    });
  } finally {
    for (const store of stores) await store.daemon.stop();
  }
}
