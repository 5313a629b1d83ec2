// P1 RPC: daemon/ping and jobs/get round trips over the socket, sequential (p50, p99) and
// pipelined (32 in flight, requests/s), against a bare NDJSON JSON-RPC server built with the
// daemon's framing code, in a process of its own like the daemon, answering the same payloads.
// Both are driven by the same client (rpc/client.ts) from this process, alternating request by
// request (sequential) and round by round (pipelined), so that drift of the machine (on this VM
// the wake-up latency of an idle CPU moves round trips between ~0.05 and ~0.5 ms within seconds)
// affects both alike. The servers' CPU per request is shown too: the work each one does.
import { RpcClient } from '../rpc/client.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { spawnEchoServer, type EchoChild } from './lib/echo-server.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { CLK_TCK, sampleProc } from './lib/proc.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';

const IN_FLIGHT = 32;

async function sequential(client: RpcClient, method: string, params: unknown, count: number, into: number[]): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    await client.request(method, params);
    into.push(performance.now() - t0);
  }
}

/** `total` requests with `IN_FLIGHT` outstanding at all times; returns requests per second. */
async function pipelined(client: RpcClient, method: string, params: unknown, total: number): Promise<number> {
  let sent = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (sent < total) {
        sent += 1;
        await client.request(method, params);
      }
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

export const p1: Benchmark = {
  id: 'P1',
  title: 'RPC round trips and throughput vs a bare NDJSON JSON-RPC server',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick ? { warm: 300, seq: 1000, pipe: 1000, rounds: 4 } : { warm: 2000, seq: 10_000, pipe: 2000, rounds: 20 };
    const dir = await ctx.tempDir('p1');
    const daemon = await BenchDaemon.start({ dir });
    let echo: EchoChild | null = null;
    try {
      const skilld = await daemon.client();
      const hub = await EventHub.attach(await daemon.client());
      // One finished job to read with jobs/get.
      const created = await skilld.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } });
      await hub.waitStatus(created.job_id, ['succeeded']);
      const job = await skilld.request<Job>('jobs/get', { job_id: created.job_id });
      const pong = await skilld.request('daemon/ping');
      // The bare server answers with the very same payloads.
      echo = await spawnEchoServer(dir, { 'daemon/ping': pong, 'jobs/get': job });
      const bare = await RpcClient.connect(echo.socket);
      try {
        const calls: Array<{ name: string; method: string; params: unknown }> = [
          { name: 'ping', method: 'daemon/ping', params: undefined },
          { name: 'jobs/get', method: 'jobs/get', params: { job_id: job.job_id } },
        ];
        // Warm both servers up on both methods (JIT) before anything is recorded.
        for (const call of calls) {
          await sequential(bare, call.method, call.params, sizes.warm, []);
          await sequential(skilld, call.method, call.params, sizes.warm, []);
          await pipelined(bare, call.method, call.params, sizes.warm);
          await pipelined(skilld, call.method, call.params, sizes.warm);
        }
        for (const call of calls) {
          // Sequential: one request to each server in turn (the order swapped every time), so both
          // see the machine in the same state; on a VM, CPU wake-up latency drifts a lot over seconds.
          const samples = { bare: [] as number[], skilld: [] as number[] };
          for (let i = 0; i < sizes.seq; i += 1) {
            const order = i % 2 === 0 ? (['bare', 'skilld'] as const) : (['skilld', 'bare'] as const);
            for (const name of order) {
              const t0 = performance.now();
              await (name === 'bare' ? bare : skilld).request(call.method, call.params);
              samples[name].push(performance.now() - t0);
            }
          }
          const s = summarize(samples.skilld);
          const b = summarize(samples.bare);
          r.info(`${call.name} sequential skilld: ${fmtSummary(s)}`);
          r.info(`${call.name} sequential bare:   ${fmtSummary(b)}`);
          r.check({ metric: `${call.name} p50`, value: s.p50, unit: 'ms', baseline: b.p50, baselineLabel: 'bare', target: { kind: 'ratio<=', limit: 1.5 } });
          r.info(`${call.name} p99 ${fmt(s.p99)} ms (bare ${fmt(b.p99)} ms, ratio ${fmt(s.p99 / b.p99)})`);

          // Pipelined: short rounds alternating between the servers; throughput = requests / time, summed over the rounds.
          const time = { bare: 0, skilld: 0 };
          const cpuUs = { bare: 0, skilld: 0 };
          for (let round = 0; round < sizes.rounds; round += 1) {
            const order = round % 2 === 0 ? (['bare', 'skilld'] as const) : (['skilld', 'bare'] as const);
            for (const name of order) {
              const pid = name === 'bare' ? (echo as EchoChild).pid : daemon.pid;
              const before = sampleProc(pid);
              const t0 = performance.now();
              await pipelined(name === 'bare' ? bare : skilld, call.method, call.params, sizes.pipe);
              time[name] += performance.now() - t0;
              const after = sampleProc(pid);
              if (before !== null && after !== null) cpuUs[name] += ((after.cpuTicks - before.cpuTicks) * 1e6) / CLK_TCK;
            }
          }
          const total = sizes.pipe * sizes.rounds;
          const rate = { bare: total / (time.bare / 1000), skilld: total / (time.skilld / 1000) };
          r.info(`${call.name} pipelined, ${IN_FLIGHT} in flight, ${sizes.rounds} alternating rounds of ${sizes.pipe}: skilld ${fmt(rate.skilld)} req/s, bare ${fmt(rate.bare)} req/s`);
          r.info(`${call.name} server CPU per request while pipelined: skilld ${fmt(cpuUs.skilld / total)} µs, bare ${fmt(cpuUs.bare / total)} µs`);
          r.check({ metric: `${call.name} pipelined throughput`, value: rate.skilld, unit: 'req/s', baseline: rate.bare, baselineLabel: 'bare', target: { kind: 'ratio>=', limit: 0.6 } });
        }
      } finally {
        bare.close();
      }
      if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      await daemon.stop();
      await echo?.stop();
    }
  },
};
