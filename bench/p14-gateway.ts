// P14 The model gateway: what a job's way to its provider through the bridge and the gateway adds
// to a model call, against the same call straight to the same provider, in one run; the
// throughput of a long streamed answer; and the gateway's memory while it streams.
//
// Method. Three processes, each alone (bench/lib/gateway-chain.ts): a stand-in provider on
// 127.0.0.1 (Anthropic's Messages event stream, bench/lib/model-stream.ts), a job's gateway (the
// daemon's egress proxy and model gateway on a Unix socket, token hash given), and the job's
// bridge script on another port of 127.0.0.1 leading to that socket. In a job the bridge listens
// inside the network namespace; on loopback the namespace adds nothing, so it runs on the host.
// This process is the engine: `POST /v1/messages` with a 4 KiB body and `x-api-key`, through the
// bridge with the job's token, or straight to the provider with the key (the direct baseline).
// Latency: from the request's start to its small answer's last byte, on a new connection each
// time (`agent: false`; the gateway's own connections to the provider stay open, as in a job) and
// on one kept-alive connection per path; direct and gateway calls alternate (their order swapped
// each round) to cancel drift. Streaming: a 100 MB answer of ~200-byte frames, direct and
// gateway alternating after one uncounted answer each (the first long stream grows V8's young
// generation to its cap, once: shown apart); the gateway's resident set is read from /proc every
// 20 ms and as 10 % and 90 % of the answer have arrived, and what it metered is checked against
// what was sent. Then the same with the provider speaking TLS (a certificate of its own, trusted
// by the gateway through NODE_EXTRA_CA_CERTS and by the direct calls): new-connection calls and
// long answers, shown and not checked, since every real provider is reached that way.
import { spawnSync } from 'node:child_process';
import type { Agent } from 'node:http';
import type { BenchContext, Benchmark } from './lib/context.js';
import { callModel, keptAlive, requestBody, startGatewayChain, type CallResult, type GatewayChain } from './lib/gateway-chain.js';
import { DELTA_BYTES, INPUT_TOKENS, planStream } from './lib/model-stream.js';
import { CLK_TCK, sampleProc, type ProcSample } from './lib/proc.js';
import { fmt, fmtSummary, median, summarize } from './lib/stats.js';

const REQUEST_BYTES = 4096;
const SMALL_ANSWER_BYTES = 2000;
const SAMPLE_EVERY_MS = 20;
const KIB_PER_MIB = 1024;

type Path = 'direct' | 'gateway' | 'relay';

/**
 * The call times of two paths, alternating (who goes first swapped every round), on a new
 * connection each call or on one kept-alive connection per path. The gateway and the floor are
 * each measured against the direct path in a pass of their own: taking turns with a third path
 * changes where the scheduler finds each process, and measured the gateway ~0.1 ms slower.
 */
async function latencies(chain: GatewayChain, connection: 'new' | 'kept', warm: number, samples: number, paths: readonly [Path, Path]): Promise<Partial<Record<Path, number[]>>> {
  const body = requestBody(REQUEST_BYTES);
  const agent = (path: Path): Agent | false => (connection === 'new' ? false : keptAlive(target(chain, path).ca !== null));
  const agents: Partial<Record<Path, Agent | false>> = Object.fromEntries(paths.map((path) => [path, agent(path)]));
  const times: Partial<Record<Path, number[]>> = Object.fromEntries(paths.map((path) => [path, []]));
  try {
    for (let i = 0; i < warm + samples; i += 1) {
      for (const path of i % 2 === 0 ? paths : [paths[1], paths[0]]) {
        const { ms } = await callModel({ ...target(chain, path), body, answerBytes: SMALL_ANSWER_BYTES, agent: agents[path] ?? false });
        if (i >= warm) times[path]?.push(ms);
      }
    }
  } finally {
    for (const one of Object.values(agents)) if (one !== false) one.destroy();
  }
  return times;
}

/** What one long answer through the bridge and the gateway took of their processes. */
interface GatewayStream {
  mbPerSec: number;
  /** The gateway's resident KiB before the call, at 10 % and 90 % of the answer, and the most seen. */
  rss: { start: number; at10: number; at90: number; peak: number };
  /** V8's heap as reserved (heapTotal) and the memory of Buffers outside it (external), KiB, at 10 % and 90 %: which of the two a growth is. */
  heap: { total10: number; total90: number; external10: number; external90: number };
  /** CPU ms of the gateway's and the bridge's processes. */
  cpu: { gateway: number; bridge: number };
  /** The bridge's resident growth, KiB, most seen − before. */
  bridgeGrowth: number;
}

/** Where a call on each path goes, and what it carries: the key straight or through the byte relay, the job's token through the gateway. */
function target(chain: GatewayChain, path: Path): { port: number; apiKey: string; ca: Buffer | null } {
  if (path === 'gateway') return { port: chain.bridgePort, apiKey: chain.token, ca: null };
  return { port: path === 'direct' ? chain.upstreamPort : chain.relayPort, apiKey: chain.key, ca: chain.ca };
}

/** One long answer straight from the provider, or through a bridge and the byte relay: its throughput in MB/s. */
async function streamDirect(chain: GatewayChain, bytes: number, path: 'direct' | 'relay' = 'direct'): Promise<number> {
  const result = await callModel({ ...target(chain, path), body: requestBody(REQUEST_BYTES), answerBytes: bytes, agent: false });
  return result.bytes / 1e3 / result.ms;
}

/** One long answer through the bridge and the gateway, their memory read as it goes. */
async function streamGateway(chain: GatewayChain, bytes: number): Promise<GatewayStream> {
  const rss = (pid: number): number => sampleProc(pid)?.rssKb ?? Number.NaN;
  // The bridge's processes: node's one, or socat's listener and one per connection (its CPU with the children it has reaped).
  const bridgeRss = (): number => chain.bridgePids().reduce((sum, pid) => sum + (sampleProc(pid)?.rssKb ?? 0), 0);
  const bridgeTicks = (): number => chain.bridgePids().reduce((sum, pid) => {
    const one = sampleProc(pid);
    return sum + (one === null ? 0 : one.cpuTicks + (chain.bridgeKind === 'socat' ? one.childTicks : 0));
  }, 0);
  const before = { gateway: sampleProc(chain.gateway.pid), bridge: bridgeTicks() };
  const start = rss(chain.gateway.pid);
  const bridgeStart = bridgeRss();
  let peak = start;
  let bridgePeak = bridgeStart;
  const sample = (): number => {
    const now = rss(chain.gateway.pid);
    peak = Math.max(peak, now);
    bridgePeak = Math.max(bridgePeak, bridgeRss());
    return now;
  };
  const marks = { at10: Number.NaN, at90: Number.NaN };
  const heaps: { at10?: Promise<string>; at90?: Promise<string> } = {};
  const timer = setInterval(sample, SAMPLE_EVERY_MS);
  let result: CallResult;
  try {
    result = await callModel({
      port: chain.bridgePort,
      apiKey: chain.token,
      body: requestBody(REQUEST_BYTES),
      answerBytes: bytes,
      agent: false,
      progress: (received) => {
        if (heaps.at10 === undefined && received >= bytes * 0.1) {
          marks.at10 = sample();
          heaps.at10 = chain.gateway.ask('memory').catch(() => '{}');
        } else if (heaps.at90 === undefined && received >= bytes * 0.9) {
          marks.at90 = sample();
          heaps.at90 = chain.gateway.ask('memory').catch(() => '{}');
        }
      },
    });
  } finally {
    clearInterval(timer);
  }
  const after = { gateway: sampleProc(chain.gateway.pid), bridge: bridgeTicks() };
  const heap = async (answer: Promise<string> | undefined): Promise<{ total: number; external: number }> => {
    const memory = JSON.parse((await answer) ?? '{}') as { heapTotal?: number; external?: number };
    return { total: (memory.heapTotal ?? Number.NaN) / 1024, external: (memory.external ?? Number.NaN) / 1024 };
  };
  const [heap10, heap90] = [await heap(heaps.at10), await heap(heaps.at90)];
  const cpuMs = (a: ProcSample | null, b: ProcSample | null): number => (a === null || b === null ? Number.NaN : ((b.cpuTicks - a.cpuTicks) * 1000) / CLK_TCK);
  return {
    mbPerSec: result.bytes / 1e3 / result.ms,
    rss: { start, at10: marks.at10, at90: marks.at90, peak },
    heap: { total10: heap10.total, total90: heap90.total, external10: heap10.external, external90: heap90.external },
    cpu: { gateway: cpuMs(before.gateway, after.gateway), bridge: ((after.bridge - before.bridge) * 1000) / CLK_TCK },
    bridgeGrowth: bridgePeak - bridgeStart,
  };
}

/** One line of a gateway stream's figures. */
function streamText(one: GatewayStream): string {
  const mib = (kb: number): string => fmt(kb / KIB_PER_MIB);
  const { rss, heap, cpu } = one;
  return (
    `resident ${mib(rss.start)} MiB before, ${mib(rss.at10)} at 10 %, ${mib(rss.at90)} at 90 %, peak ${mib(rss.peak)}; ` +
    `heap reserved ${mib(heap.total10)} → ${mib(heap.total90)} MiB, Buffers outside it ${mib(heap.external10)} → ${mib(heap.external90)}; ` +
    `CPU: gateway ${fmt(cpu.gateway)} ms, bridge ${fmt(cpu.bridge)} ms; the bridge's resident +${mib(one.bridgeGrowth)} MiB`
  );
}

interface Metered {
  input_tokens: number;
  output_tokens: number;
  requests: number;
  refused: number;
}

async function metered(chain: GatewayChain): Promise<Metered> {
  return JSON.parse(await chain.gateway.ask('usage')) as Metered;
}

export const p14: Benchmark = {
  id: 'P14',
  title: "a job's model gateway: a model call through the bridge and the gateway vs straight to the provider",
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick ? { warm: 5, samples: 40, streamBytes: 8e6, rounds: 1 } : { warm: 50, samples: 1000, streamBytes: 100e6, rounds: 5 };
    const chain = await startGatewayChain(await ctx.tempDir('chain'), false);
    try {
      r.info(`the bridge: ${chain.bridgeKind}, as a daemon here chooses it`);
      const labels = { measured: 'through the bridge and the gateway', baseline: 'straight to the provider' };
      for (const [connection, limit] of [['new', 2], ['kept', 0.5]] as const) {
        const times = await latencies(chain, connection, sizes.warm, sizes.samples, ['direct', 'gateway']);
        const floor = await latencies(chain, connection, sizes.warm, Math.ceil(sizes.samples / 2), ['direct', 'relay']);
        const s = { direct: summarize(times.direct ?? []), gateway: summarize(times.gateway ?? []), relay: summarize(floor.relay ?? []), relayDirect: summarize(floor.direct ?? []) };
        const what = connection === 'new' ? 'a new connection each call' : 'one kept-alive connection';
        r.info(`model call, ${what}, through the bridge and the gateway: ${fmtSummary(s.gateway)}`);
        r.info(`model call, ${what}, straight to the provider:         ${fmtSummary(s.direct)}`);
        r.info(`model call, ${what}, through a bridge and a byte relay in the gateway's place (the floor): ${fmtSummary(s.relay)}; added p50 ${fmt(s.relay.p50 - s.relayDirect.p50)} ms (against the direct calls of its own pass)`);
        const waited = (times.gateway ?? []).filter((ms) => ms >= 30).length;
        r.info(`added p99 ${fmt(s.gateway.p99 - s.direct.p99)} ms; calls through the gateway that took 30 ms or more: ${waited} of ${sizes.samples}`);
        r.checkAddedP50(`model call, ${what}, gateway-added p50 (4 KiB request, 2 KB answer; the bridge on the host's loopback)`, s.gateway, s.direct, labels, limit);
        // 40 ms is Linux's shortest delayed ACK: what a hop that writes an answer in pieces on TCP without TCP_NODELAY waits for.
        if (waited > 0) r.info(`~40 ms is a delayed ACK's wait: a hop writes an answer in pieces on TCP without TCP_NODELAY (Nagle), and the client acknowledges late`);
      }

      const { plan, direct, relayed, streams } = await streamRounds(chain, sizes.streamBytes, sizes.rounds);
      const mb = Math.round(plan.bytes / 1e6);
      r.info(`first long answer through the gateway (not counted): ${streamText(streams.warm)}`);
      r.info(`${mb} MB answer (${plan.deltas} frames of ~${DELTA_BYTES} bytes, 64 to a write), MB/s per round: gateway ${streams.counted.map((one) => fmt(one.mbPerSec)).join(', ')}; direct ${direct.map(fmt).join(', ')}`);
      r.info(`the floor: ${floorText(relayed, direct, streams.counted)}`);
      for (const [i, one] of streams.counted.entries()) r.info(`gateway round ${i + 1}: ${streamText(one)}`);
      r.check({
        metric: `${mb} MB streamed answer, throughput through the bridge and the gateway (median of ${sizes.rounds})`,
        value: median(streams.counted.map((one) => one.mbPerSec)),
        unit: 'MB/s',
        baseline: median(direct),
        baselineLabel: 'straight to the provider',
        target: { kind: 'ratio>=', limit: 0.8 },
      });
      const growth = Math.max(...streams.counted.map((one) => one.rss.peak - one.rss.start));
      const drift = Math.max(...streams.counted.map((one) => one.rss.at90 - one.rss.at10));
      r.check({
        metric: `gateway's resident memory while it streams ${mb} MB, peak − before (max of ${streams.counted.length})`,
        value: growth / KIB_PER_MIB,
        unit: 'MiB',
        baseline: null,
        baselineLabel: '—',
        target: { kind: 'value<=', limit: 16 },
        note: `90 % − 10 % of the answer at most ${fmt(drift / KIB_PER_MIB)} MiB`,
      });
    } finally {
      await chain.stop();
    }
    await withTls(ctx, sizes);
  },
};

/**
 * The same provider speaking TLS, as every real one does: a direct call then pays the TLS a job's
 * engine would (its handshake on a new connection, the decryption of every byte), and through the
 * gateway the gateway pays it instead, on connections it keeps open. Shown, not checked: the
 * targets are stated against plain HTTP, where a hop's cost stands out most.
 */
async function withTls(ctx: BenchContext, sizes: { warm: number; samples: number; streamBytes: number; rounds: number }): Promise<void> {
  const r = ctx.report;
  if (!hasOpenssl()) return r.info('with TLS to the provider: not measured, openssl (which makes its certificate) is not installed');
  const chain = await startGatewayChain(await ctx.tempDir('chain-tls'), true);
  try {
    const samples = Math.ceil(sizes.samples / 5);
    const times = await latencies(chain, 'new', sizes.warm, samples, ['direct', 'gateway']);
    const s = { direct: summarize(times.direct ?? []), gateway: summarize(times.gateway ?? []) };
    r.info(`with TLS to the provider, a new connection each call: through the bridge and the gateway ${fmtSummary(s.gateway)}; straight to the provider ${fmtSummary(s.direct)}; added p50 ${fmt(s.gateway.p50 - s.direct.p50)} ms`);
    const rounds = Math.max(1, Math.ceil(sizes.rounds / 2));
    const { plan, direct, relayed, streams } = await streamRounds(chain, sizes.streamBytes, rounds);
    const gateway = median(streams.counted.map((one) => one.mbPerSec));
    r.info(
      `with TLS to the provider, ${Math.round(plan.bytes / 1e6)} MB answer, MB/s per round: gateway ${streams.counted.map((one) => fmt(one.mbPerSec)).join(', ')}; direct ${direct.map(fmt).join(', ')}: ` +
        `${fmt(gateway / median(direct))}× direct at the median; the floor: ${floorText(relayed, direct, streams.counted)}`,
    );
  } finally {
    await chain.stop();
  }
}

function hasOpenssl(): boolean {
  return spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
}

/** How the byte relay's throughput compares with direct, and the gateway's with it. */
function floorText(relayed: number[], direct: number[], streams: GatewayStream[]): string {
  return (
    `through a bridge and a byte relay in the gateway's place, MB/s per round ${relayed.map(fmt).join(', ')}: ` +
    `${fmt(median(relayed) / median(direct))}× direct at the median; the gateway reaches ${fmt(median(streams.map((one) => one.mbPerSec)) / median(relayed))}× of that floor`
  );
}

/**
 * Long answers on the three paths, round after round (the gateway first every other round), after
 * one uncounted answer on each: the gateway's and the bridge's young generation grows to its cap
 * under the first long stream's garbage (shown), once. Checks that the gateway metered each
 * counted answer's usage whole.
 */
async function streamRounds(chain: GatewayChain, bytes: number, rounds: number): Promise<{ plan: ReturnType<typeof planStream>; direct: number[]; relayed: number[]; streams: { warm: GatewayStream; counted: GatewayStream[] } }> {
  const warm = await streamGateway(chain, bytes);
  await streamDirect(chain, bytes);
  const before = await metered(chain);
  await streamDirect(chain, bytes, 'relay');
  const direct: number[] = [];
  const relayed: number[] = [];
  const counted: GatewayStream[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const gatewayFirst = round % 2 === 1;
    if (gatewayFirst) counted.push(await streamGateway(chain, bytes));
    direct.push(await streamDirect(chain, bytes));
    relayed.push(await streamDirect(chain, bytes, 'relay'));
    if (!gatewayFirst) counted.push(await streamGateway(chain, bytes));
  }
  const after = await metered(chain);
  const plan = planStream(bytes);
  const want = { requests: rounds, input_tokens: rounds * INPUT_TOKENS, output_tokens: rounds * plan.deltas, refused: 0 };
  const got = { requests: after.requests - before.requests, input_tokens: after.input_tokens - before.input_tokens, output_tokens: after.output_tokens - before.output_tokens, refused: after.refused };
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`the gateway metered ${JSON.stringify(got)} of the streamed answers, not ${JSON.stringify(want)}`);
  return { plan, direct, relayed, streams: { warm, counted } };
}
