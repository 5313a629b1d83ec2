// P10 Sandbox: what a job's sandbox, and then its own network, add between jobs/create and the
// engine's first instruction, against the same daemon set-up without them, and the memory each
// holds beside its engine.
//
// Method. Three daemons, alike but for `sandbox` and `network`: "preferred" with the job's own
// network (the default where the probe passes: an empty root, every path opened once and handed
// over as a descriptor, the engine as another user where the daemon is root, the default limits by
// cgroup where the host has them, a network namespace whose bridge starts the engine); the same
// with `network: "open"`; "off", and no limits. They run the same fake codex under `node --import
// engine-stamp.js`, whose stamp records when Node started (`performance.timeOrigin`, epoch ms: the
// same clock inside a sandbox). Jobs go round the three; create → start = stamp.start − the time
// jobs/create was sent. Sandbox-added = p50(sandbox, open network) − p50(none); network-added =
// p50(own network) − p50(open network). Memory: a sandboxed job holds its turn (`release_file`)
// while the resident sets of its sandbox's own processes (bubblewrap's outer process and the
// namespace's first process) are read, and the bridge's own memory (what of it is private, not
// the program's pages shared with other processes), then it is released. The bridge is the one
// the daemon chooses on this host (socat where installed); a fourth daemon with
// `network.bridge: "node"` shows what the node bridge adds, for comparison.
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { listProcesses } from '../daemon/process/proc.js';
import { runShort } from '../daemon/process/run-short.js';
import { BWRAP } from '../daemon/sandbox/bwrap.js';
import { BRIDGE_SCRIPT_PATH, NETWORK_DIR } from '../daemon/sandbox/network-bridge.js';
import { probeHere } from '../daemon/sandbox/probe.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { fakeEngine, libModuleUrl } from './lib/paths.js';
import { sampleProc } from './lib/proc.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';
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

/**
 * The resident memory, in KiB, of the sandbox's own processes of a job whose turn is held, and
 * the private memory of its network's bridge (0 without one).
 */
async function sandboxMemory(daemon: BenchDaemon, hub: EventHub): Promise<{ sandbox: number; bridge: number }> {
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
  // The node bridge's process, or each socat listener (network-bridge.ts).
  const isBridge = (line: string): boolean => line.includes(`\0${BRIDGE_SCRIPT_PATH}\0`) || line.includes(`\0UNIX-CONNECT:${NETWORK_DIR}/`);
  const bridges = listProcesses().filter((p) => isBridge(commandLine(p.pid)) && marked(p.pid, job.job_id));
  const bridge = bridges.reduce((sum, p) => sum + privateKb(p.pid), 0);
  await writeFile(join(workspace, 'release'), '');
  await hub.waitStatus(job.job_id, ['succeeded']);
  if (own.length !== 2) throw new Error(`expected the sandbox's 2 processes, found ${own.length}`);
  return { sandbox: kb, bridge };
}

/** The memory of a process that is its own (private pages, clean and dirty), in KiB. */
function privateKb(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return [...rollup.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
  } catch {
    return 0;
  }
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
    const start = async (name: string, config: Record<string, unknown>): Promise<BenchDaemon> => BenchDaemon.start({ dir: await ctx.tempDir(name), engines: { codex: { command } }, config: { max_concurrent: 4, ...config } });
    const daemons = {
      networked: await start('networked', { sandbox: 'preferred' }),
      boxed: await start('boxed', { sandbox: 'preferred', network: 'open' }),
      nodeBridge: await start('node-bridge', { sandbox: 'preferred', network: { bridge: 'node' } }),
      bare: await start('bare', { sandbox: 'off', network: 'open', limits: { processes: null, memory: null, workspace: null } }),
    };
    try {
      const hubs = { networked: await EventHub.attach(await daemons.networked.client()), boxed: await EventHub.attach(await daemons.boxed.client()), nodeBridge: await EventHub.attach(await daemons.nodeBridge.client()), bare: await EventHub.attach(await daemons.bare.client()) };
      const samples = { networked: [] as number[], boxed: [] as number[], nodeBridge: [] as number[], bare: [] as number[] };
      for (let i = 0; i < sizes.warm + sizes.samples; i += 1) {
        for (const name of ['networked', 'boxed', 'nodeBridge', 'bare'] as const) {
          const ms = await createToStart(daemons[name], hubs[name]);
          if (i >= sizes.warm) samples[name].push(ms);
        }
      }
      const s = { networked: summarize(samples.networked), boxed: summarize(samples.boxed), nodeBridge: summarize(samples.nodeBridge), bare: summarize(samples.bare) };
      const bridge = (await (await daemons.networked.client()).request<{ network: { bridge: string | null } }>('daemon/status')).network.bridge ?? 'none';
      r.info(`sandbox and own network (${bridge} bridge): create → engine process started ${fmtSummary(s.networked)}`);
      r.info(`the same, node bridge:   create → engine process started ${fmtSummary(s.nodeBridge)}; added p50 ${fmt(s.nodeBridge.p50 - s.boxed.p50)} ms`);
      r.info(`sandbox, host's network:  create → engine process started ${fmtSummary(s.boxed)}`);
      r.info(`none:                     create → engine process started ${fmtSummary(s.bare)}`);
      r.checkAddedP50('create → engine start, sandbox-added p50', s.boxed, s.bare, { measured: 'with a sandbox', baseline: 'the same daemon without one' });
      r.checkAddedP50(`create → engine start, own-network-added p50 (the ${bridge} bridge starts first)`, s.networked, s.boxed, { measured: 'with its own network', baseline: "the same sandbox on the host's network" }, 80);
      const memory = await sandboxMemory(daemons.networked, hubs.networked);
      r.check({
        metric: 'memory of a sandbox beside its engine (resident, its 2 processes)',
        value: memory.sandbox / KIB_PER_MIB,
        unit: 'MiB',
        baseline: null,
        baselineLabel: '—',
        target: { kind: 'value<=', limit: 16 },
      });
      r.check({
        metric: `memory of a job's network bridge (${bridge}; its own pages, not the program's)`,
        value: memory.bridge / KIB_PER_MIB,
        unit: 'MiB',
        baseline: null,
        baselineLabel: '—',
        target: { kind: 'value<=', limit: 16 },
      });
      for (const daemon of Object.values(daemons)) if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      for (const daemon of Object.values(daemons)) await daemon.stop();
    }
  },
};
