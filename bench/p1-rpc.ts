// P1 RPC: daemon/ping and jobs/get round trips over the socket, sequential (p50, p99) and
// pipelined (32 in flight, requests/s), against a bare NDJSON JSON-RPC server built with the
// daemon's framing code, in a process of its own like the daemon, answering the same payloads.
// Both are driven by the same client (rpc/client.ts) from this process, alternating request by
// request (sequential) and round by round (pipelined), so that drift of the machine affects both
// alike. The servers' CPU per request is shown too: the work each one does.
//
// Where the scheduler puts each process decides most of a round trip on a small VM: a wake-up on
// the client's own CPU costs ~0.08 ms, one on the other (idle) CPU ~0.4 ms. Left to itself, the
// scheduler tends to keep the small echo server next to the client and the daemon on the other
// CPU, and the "ratio" then compares two placements, not two servers. So the checks are made with
// the placement fixed by CPU affinity, the same for both servers: all three processes on one CPU,
// and the client on one CPU with both servers on another. The unpinned figures are shown as well.
import { RpcClient } from '../rpc/client.js';
import { allowedCpus, parseCpuList, pinProcess } from './lib/affinity.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { spawnEchoServer, type EchoChild } from './lib/echo-server.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { CLK_TCK, sampleProc } from './lib/proc.js';
import type { BenchReporter } from './lib/report.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';

const IN_FLIGHT = 32;

interface Sizes {
  warm: number;
  seq: number;
  pipe: number;
  rounds: number;
}

interface Call {
  name: string;
  method: string;
  params: unknown;
}

interface Servers {
  skilld: RpcClient;
  bare: RpcClient;
  daemonPid: number;
  echoPid: number;
}

/** A fixed placement: the CPUs of the client (this process) and of both servers; null = the scheduler's choice. */
interface Placement {
  label: string;
  client: string | null;
  servers: string | null;
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

function placements(cpuList: string | null): Placement[] {
  const cpus = cpuList === null ? [] : parseCpuList(cpuList);
  const fixed: Placement[] = [];
  if (cpus.length >= 1) fixed.push({ label: `one CPU`, client: String(cpus[0]), servers: String(cpus[0]) });
  if (cpus.length >= 2) fixed.push({ label: `two CPUs`, client: String(cpus[0]), servers: String(cpus[1]) });
  return [{ label: 'unpinned', client: null, servers: null }, ...fixed];
}

/** Applies a placement to the three processes; the reason when it cannot be applied. */
function place(placement: Placement, servers: Servers, restore: string): string | null {
  const moves: Array<[number, string]> = [
    [process.pid, placement.client ?? restore],
    [servers.daemonPid, placement.servers ?? restore],
    [servers.echoPid, placement.servers ?? restore],
  ];
  for (const [pid, cpus] of moves) {
    const pinned = pinProcess(pid, cpus);
    if (!pinned.ok) return pinned.reason;
  }
  return null;
}

/** Sequential round trips alternating request by request (the order swapped every time). */
async function measureSequential(servers: Servers, call: Call, count: number): Promise<{ skilld: number[]; bare: number[] }> {
  const samples = { bare: [] as number[], skilld: [] as number[] };
  for (let i = 0; i < count; i += 1) {
    const order = i % 2 === 0 ? (['bare', 'skilld'] as const) : (['skilld', 'bare'] as const);
    for (const name of order) {
      const t0 = performance.now();
      await servers[name].request(call.method, call.params);
      samples[name].push(performance.now() - t0);
    }
  }
  return samples;
}

/** Pipelined rounds alternating between the servers; throughput and server CPU per request. */
async function measurePipelined(servers: Servers, call: Call, sizes: Sizes): Promise<{ rate: { skilld: number; bare: number }; cpuUs: { skilld: number; bare: number } }> {
  const time = { bare: 0, skilld: 0 };
  const cpuUs = { bare: 0, skilld: 0 };
  for (let round = 0; round < sizes.rounds; round += 1) {
    const order = round % 2 === 0 ? (['bare', 'skilld'] as const) : (['skilld', 'bare'] as const);
    for (const name of order) {
      const pid = name === 'bare' ? servers.echoPid : servers.daemonPid;
      const before = sampleProc(pid);
      const t0 = performance.now();
      await pipelined(servers[name], call.method, call.params, sizes.pipe);
      time[name] += performance.now() - t0;
      const after = sampleProc(pid);
      if (before !== null && after !== null) cpuUs[name] += ((after.cpuTicks - before.cpuTicks) * 1e6) / CLK_TCK;
    }
  }
  const total = sizes.pipe * sizes.rounds;
  return {
    rate: { bare: total / (time.bare / 1000), skilld: total / (time.skilld / 1000) },
    cpuUs: { bare: cpuUs.bare / total, skilld: cpuUs.skilld / total },
  };
}

async function measurePlacement(r: BenchReporter, placement: Placement, servers: Servers, calls: Call[], sizes: Sizes): Promise<void> {
  const checked = placement.client !== null;
  for (const call of calls) {
    const warm = Math.min(sizes.warm, sizes.seq);
    await measureSequential(servers, call, warm);
    const samples = await measureSequential(servers, call, sizes.seq);
    const s = summarize(samples.skilld);
    const b = summarize(samples.bare);
    const where = `${call.name} (${placement.label})`;
    r.info(`${where} sequential skilld: ${fmtSummary(s)}`);
    r.info(`${where} sequential bare:   ${fmtSummary(b)}`);
    if (checked) r.check({ metric: `${call.name} p50, ${placement.label}`, value: s.p50, unit: 'ms', baseline: b.p50, baselineLabel: 'bare', target: { kind: 'ratio<=', limit: 1.5 } });
    else r.info(`${where} p50 ratio ${fmt(s.p50 / b.p50)}: placement left to the scheduler, shown, not checked`);
    r.info(`${where} p99 ${fmt(s.p99)} ms (bare ${fmt(b.p99)} ms, ratio ${fmt(s.p99 / b.p99)})`);

    const piped = await measurePipelined(servers, call, sizes);
    r.info(`${where} pipelined, ${IN_FLIGHT} in flight, ${sizes.rounds} alternating rounds of ${sizes.pipe}: skilld ${fmt(piped.rate.skilld)} req/s, bare ${fmt(piped.rate.bare)} req/s`);
    r.info(`${where} server CPU per request while pipelined: skilld ${fmt(piped.cpuUs.skilld)} µs, bare ${fmt(piped.cpuUs.bare)} µs`);
    if (checked) r.check({ metric: `${call.name} pipelined, ${placement.label}`, value: piped.rate.skilld, unit: 'req/s', baseline: piped.rate.bare, baselineLabel: 'bare', target: { kind: 'ratio>=', limit: 0.6 } });
  }
}

export const p1: Benchmark = {
  id: 'P1',
  title: 'RPC round trips and throughput vs a bare NDJSON JSON-RPC server',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes: Sizes = ctx.quick ? { warm: 300, seq: 500, pipe: 1000, rounds: 2 } : { warm: 2000, seq: 5000, pipe: 2000, rounds: 10 };
    const dir = await ctx.tempDir('p1');
    const ownCpus = allowedCpus(process.pid);
    const daemon = await BenchDaemon.start({ dir });
    let echo: EchoChild | null = null;
    let bare: RpcClient | null = null;
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
      bare = await RpcClient.connect(echo.socket);
      const servers: Servers = { skilld, bare, daemonPid: daemon.pid, echoPid: echo.pid };
      const calls: Call[] = [
        { name: 'ping', method: 'daemon/ping', params: undefined },
        { name: 'jobs/get', method: 'jobs/get', params: { job_id: job.job_id } },
      ];
      // Warm both servers up on both methods (JIT) before anything is recorded.
      for (const call of calls) {
        await measureSequential(servers, call, sizes.warm);
        await measurePipelined(servers, call, { ...sizes, rounds: 1, pipe: sizes.warm });
      }
      for (const placement of placements(ownCpus)) {
        if (placement.client !== null) {
          const problem = ownCpus === null ? 'the allowed CPUs are unknown' : place(placement, servers, ownCpus);
          if (problem !== null) {
            r.info(`placement "${placement.label}" skipped, the processes cannot be pinned: ${problem}`);
            continue;
          }
        }
        await measurePlacement(r, placement, servers, calls, sizes);
      }
      if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      if (ownCpus !== null) pinProcess(process.pid, ownCpus);
      bare?.close();
      await daemon.stop();
      await echo?.stop();
    }
  },
};
