// P9 Replay: 8 clients subscribe at once with after_seq 0 to a finished job whose engine printed
// 20 MB of agent messages, and read every event to its `finished`. Figures: the time until the
// last of them has it all, and the daemon's peak resident memory above what it held before.
// Baseline: a bare server in a process of its own that pipes the job's events.ndjson to each of 8
// clients at once, as it is on disk (no parsing, no JSON-RPC), the same bytes of the same log.
import { stat, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import { sampleProc } from './lib/proc.js';
import { spawnServerChild } from './lib/server-child.js';
import { median } from './lib/stats.js';
import { nowMs } from './lib/util.js';

const CLIENTS = 8;
const ROUNDS = 3;

interface Job {
  job_id: string;
}

/** One client: sends `request`, reads every byte until `done(text so far)` says so or the server closes; resolves with the bytes read. */
function readAll(socket: string, request: string, done: (tail: string) => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socket);
    let bytes = 0;
    let tail = '';
    conn.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-512);
      if (done(tail)) {
        conn.destroy();
        resolve(bytes);
      }
    });
    conn.on('close', () => resolve(bytes));
    conn.on('error', reject);
    conn.write(request);
  });
}

/** CLIENTS readers at once; the time until the last one is done, and each one's bytes. */
async function together(read: () => Promise<number>): Promise<{ ms: number; bytes: number[] }> {
  const t0 = nowMs();
  const bytes = await Promise.all(Array.from({ length: CLIENTS }, read));
  return { ms: nowMs() - t0, bytes };
}

/** The daemon's peak resident size during `run`, above its size before, in MiB: VmHWM reset first where the kernel lets us, else sampled. */
async function peakGrowth(pid: number, run: () => Promise<unknown>): Promise<number> {
  const before = sampleProc(pid);
  if (before === null) throw new Error('the daemon is gone');
  const reset = await writeFile(`/proc/${pid}/clear_refs`, '5').then(() => true, () => false);
  let sampled = before.rssKb;
  const sampler = reset ? null : setInterval(() => (sampled = Math.max(sampled, sampleProc(pid)?.rssKb ?? 0)), 20);
  try {
    await run();
  } finally {
    if (sampler !== null) clearInterval(sampler);
  }
  const peak = reset ? (sampleProc(pid)?.hwmKb ?? Number.NaN) : sampled;
  return (peak - before.rssKb) / 1024;
}

export const p9: Benchmark = {
  id: 'P9',
  title: `replay: ${CLIENTS} clients replay a chatty job's events at once`,
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const chattyBytes = ctx.quick ? 2e6 : 20e6;
    const dir = await ctx.tempDir('daemon');
    const daemon = await BenchDaemon.start({ dir });
    try {
      const client = await daemon.client();
      const hub = await EventHub.attach(client);
      const job = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'chatty', chatty_bytes: chattyBytes } });
      await hub.waitFinished(job.job_id, { timeoutMs: 600_000 });
      const log = join(daemon.stateDir, 'runs', job.job_id, 'events.ndjson');
      const bare = await spawnServerChild(await ctx.tempDir('bare'), 'file-server-main', [join(dir, 'bare.sock'), log]);
      try {
        const subscribe = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'jobs/subscribe', params: { job_id: job.job_id, after_seq: 0 } })}\n`;
        const daemonMs: number[] = [];
        const bareMs: number[] = [];
        const growth: number[] = [];
        let sent = 0;
        for (let round = 0; round < ROUNDS; round += 1) {
          // Alternating, so that both meet the same machine.
          const baseline = await together(() => readAll(join(dir, 'bare.sock'), '\n', () => false));
          bareMs.push(baseline.ms);
          let replays = { ms: 0, bytes: [] as number[] };
          growth.push(await peakGrowth(daemon.pid, async () => (replays = await together(() => readAll(daemon.socket, subscribe, (tail) => tail.includes('"type":"finished"'))))));
          daemonMs.push(replays.ms);
          sent = Math.min(...replays.bytes);
          if (sent < baseline.bytes[0]!) throw new Error(`a replay ended after ${sent} bytes, short of the log's ${baseline.bytes[0]!}`);
        }
        r.info(`each client got ${(sent / 2 ** 20).toFixed(1)} MiB (the log is ${((await stat(log)).size / 2 ** 20).toFixed(1)} MiB on disk)`);
        r.info(`daemon: ${daemonMs.map((ms) => ms.toFixed(0)).join(', ')} ms; bare: ${bareMs.map((ms) => ms.toFixed(0)).join(', ')} ms; peak growth ${growth.map((g) => g.toFixed(1)).join(', ')} MiB`);
        r.check({ metric: `${CLIENTS} replays of a ${chattyBytes / 1e6} MB job, all to the end (median of ${ROUNDS})`, value: median(daemonMs), unit: 'ms', baseline: median(bareMs), baselineLabel: 'the log piped bare', target: { kind: 'ratio<=', limit: 10 } });
        r.check({ metric: `daemon's peak memory growth during the ${CLIENTS} replays (max of ${ROUNDS})`, value: Math.max(...growth), unit: 'MiB', baseline: null, baselineLabel: '', target: { kind: 'value<=', limit: 150 } });
      } finally {
        await bare.stop();
      }
      if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      await daemon.stop();
    }
  },
};
