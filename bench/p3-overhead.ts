// P3 Overhead: what the daemon adds between jobs/create and the engine process starting, and
// between the engine's exit and `succeeded` being visible to a subscribed client, against
// spawning the same fake engine directly (same command, same argv, same environment).
//
// Method. The fake codex runs as `node --import engine-stamp.js fake-codex.mjs <argv>` in both
// cases; the stamp module records, in the process's cwd, `performance.timeOrigin` (when Node
// started, before its ~50-130 ms of bootstrap, whose noise would otherwise swamp a few ms of
// overhead) and the time process.exit ran (the fake exits right after its last output line).
// Both are epoch ms with sub-ms resolution, comparable with this process's clock.
//   daemon: create→start = stamp.start − (time jobs/create was sent)
//           exit→visible = (receipt of status_changed → succeeded) − stamp.exit
//   direct: spawn→start  = stamp.start − (time spawn() was called)
//           exit→seen    = (the parent's 'exit' event) − stamp.exit
// Daemon-added = p50(daemon) − p50(direct). Daemon jobs and direct runs alternate.
//
// Without a sandbox or limits: P10 measures what a job's sandbox and its limits add. The prompt
// goes on stdin in both, as the daemon gives it.
//
// Containment. Where cgroup v2 is writable the daemon starts each engine through a shell that
// moves itself into a fresh cgroup, then execs the engine; the kernel makes that move wait for an
// RCU grace period (docs/engines.md). P3 runs once per containment, and the direct baseline is
// held the same way (the same shell into a fresh cgroup), so daemon-added stays what the daemon
// adds; the containment's own cost is printed beside it (held direct − plain direct).
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCgroup, joinCgroupArgv, killCgroup, probeCgroups, removeCgroup } from '../daemon/process/cgroup.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { fakeEngine, libModuleUrl } from './lib/paths.js';
import { sweepProcesses } from './lib/proc.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';
import { benchEnv, nowMs } from './lib/util.js';

interface Stamp {
  pid: number;
  start: number;
  exit: number;
  code: number;
}

async function readStamp(cwd: string): Promise<Stamp> {
  const text = await readFile(join(cwd, '.bench-stamp.ndjson'), 'utf8');
  const first = text.split('\n')[0];
  if (first === undefined || first === '') throw new Error(`no stamp in ${cwd}`);
  return JSON.parse(first) as Stamp;
}

interface DirectRun {
  spawnToStart: number;
  spawnToFirstLine: number;
  spawnToExitSeen: number;
  exitToSeen: number;
}

/** How a direct run is held: plainly, or in a fresh cgroup under `dir` as the daemon's engines are. */
type Holding = { kind: 'process_group' } | { kind: 'cgroup'; dir: string };

async function runDirect(command: readonly string[], call: { argv: string[]; prompt: string }, cwd: string, holding: Holding, n: number): Promise<DirectRun> {
  const { argv } = call;
  const cgroup = holding.kind === 'cgroup' ? join(holding.dir, `skilld-bench-direct-${process.pid}-${n}`) : null;
  if (cgroup !== null) createCgroup(cgroup);
  try {
    return await spawnDirect(cgroup === null ? [...command, ...argv] : joinCgroupArgv(cgroup, [...command, ...argv]), cwd, call.prompt);
  } finally {
    if (cgroup !== null) {
      killCgroup(cgroup);
      for (let tries = 0; tries < 500 && !removeCgroup(cgroup); tries += 1) await new Promise((r) => setTimeout(r, 2));
    }
  }
}

/** The engine started with its prompt on stdin, as the daemon gives it (engines/prompt-route.ts). */
async function spawnDirect(full: readonly string[], cwd: string, prompt: string): Promise<DirectRun> {
  const [file, ...rest] = full as [string, ...string[]];
  const t0 = nowMs();
  const child = spawn(file, rest, { cwd, env: benchEnv(), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stdin.end(prompt);
  let firstLine = Number.NaN;
  child.stdout.on('data', (chunk: Buffer) => {
    if (Number.isNaN(firstLine) && chunk.includes(0x0a)) firstLine = nowMs();
  });
  child.stderr.resume();
  const exitSeen = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve(nowMs()));
  });
  const stamp = await readStamp(cwd);
  if (stamp.code !== 0) throw new Error(`the directly spawned fake engine exited with ${stamp.code}`);
  return { spawnToStart: stamp.start - t0, spawnToFirstLine: firstLine - t0, spawnToExitSeen: exitSeen - t0, exitToSeen: exitSeen - stamp.exit };
}

interface Measured {
  createToStart: number;
  exitToVisible: number;
  spawnToStart: number;
  exitToSeen: number;
}

export const p3: Benchmark = {
  id: 'P3',
  title: 'daemon-added latency around an engine process vs spawning it directly',
  async run(ctx: BenchContext): Promise<void> {
    const probe = await probeCgroups();
    const plain = await measure(ctx, { kind: 'process_group' });
    if (!probe.usable) {
      ctx.report.info(`cgroup containment not measured: ${probe.problem}`);
      return;
    }
    const held = await measure(ctx, { kind: 'cgroup', dir: probe.dir });
    ctx.report.info(`cgroup containment's own cost, direct spawn → start p50: ${fmt(held.spawnToStart)} ms held, ${fmt(plain.spawnToStart)} ms plain (+${fmt(held.spawnToStart - plain.spawnToStart)} ms, the kernel's wait before a process moves into a cgroup)`);
  },
};

async function measure(ctx: BenchContext, holding: Holding): Promise<Measured> {
  const r = ctx.report;
  const label = holding.kind === 'cgroup' ? 'cgroup' : 'process group';
  r.info(`-- containment: ${label}`);
  const sizes = ctx.quick ? { warm: 1, samples: 5 } : { warm: 3, samples: 40 };
  const dir = await ctx.tempDir(`daemon-${holding.kind}`);
  const directDir = await ctx.tempDir(`direct-${holding.kind}`);
  const command = [process.execPath, '--import', libModuleUrl('engine-stamp'), fakeEngine('codex')];
  const daemon = await BenchDaemon.start({ dir, engines: { codex: { command } }, config: { max_concurrent: 4, process_containment: holding.kind, sandbox: 'off', limits: { processes: null, memory: null } } });
  try {
    const client = await daemon.client();
    const hub = await EventHub.attach(await daemon.client());
    const d = { createToStart: [] as number[], createToRunning: [] as number[], createToFirstOutput: [] as number[], exitToVisible: [] as number[], createAnswered: [] as number[] };
    const x = { spawnToStart: [] as number[], spawnToFirstLine: [] as number[], exitToSeen: [] as number[] };
    let call: { argv: string[]; prompt: string } | null = null;
    for (let i = 0; i < sizes.warm + sizes.samples; i += 1) {
      const record = i >= sizes.warm;
      // Through the daemon.
      const t0 = nowMs();
      const job = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } });
      const answered = nowMs();
      const running = await hub.waitStatus(job.job_id, ['running']);
      const done = await hub.waitStatus(job.job_id, ['succeeded']);
      const workspace = join(daemon.stateDir, 'runs', job.job_id, 'workspace');
      const stamp = await readStamp(workspace);
      if (call === null) {
        const calls = await readFile(join(workspace, '.fake-engine', 'calls.ndjson'), 'utf8');
        call = JSON.parse(calls.split('\n')[0] as string) as { argv: string[]; prompt: string };
      }
      if (record) {
        d.createAnswered.push(answered - t0);
        d.createToRunning.push(running.at - t0);
        d.createToStart.push(stamp.start - t0);
        d.createToFirstOutput.push((hub.firstOutputAt(job.job_id) ?? Number.NaN) - t0);
        d.exitToVisible.push(done.at - stamp.exit);
      }
      // Directly, same command, argv and prompt, held the same way, in a fresh folder like the daemon's fresh workspace.
      const cwd = await ctx.tempDir(`direct-${holding.kind}/run-${i}`);
      const run = await runDirect(command, call, cwd, holding, i);
      if (record) {
        x.spawnToStart.push(run.spawnToStart);
        x.spawnToFirstLine.push(run.spawnToFirstLine);
        x.exitToSeen.push(run.exitToSeen);
      }
    }
    sweepProcesses(directDir);
    const s = {
      createToStart: summarize(d.createToStart),
      exitToVisible: summarize(d.exitToVisible),
      spawnToStart: summarize(x.spawnToStart),
      exitToSeen: summarize(x.exitToSeen),
      firstOut: summarize(d.createToFirstOutput),
      firstLine: summarize(x.spawnToFirstLine),
    };
    r.info(`daemon: jobs/create answered ${fmtSummary(summarize(d.createAnswered))}`);
    r.info(`daemon: create → status running received ${fmtSummary(summarize(d.createToRunning))}`);
    r.info(`daemon: create → engine process started ${fmtSummary(s.createToStart)}`);
    r.info(`direct: spawn → engine process started ${fmtSummary(s.spawnToStart)}`);
    r.info(`daemon: create → first output event received ${fmtSummary(s.firstOut)}`);
    r.info(`direct: spawn → first stdout line read ${fmtSummary(s.firstLine)}`);
    r.info(`daemon: engine exit → succeeded received ${fmtSummary(s.exitToVisible)}`);
    r.info(`direct: engine exit → parent's exit event ${fmtSummary(s.exitToSeen)}`);
    r.info(`first output visible, daemon-added at p50: ${fmt(s.firstOut.p50 - s.firstLine.p50)} ms`);
    r.checkAddedP50(`create → engine start, daemon-added p50 (${label})`, s.createToStart, s.spawnToStart, { measured: 'daemon create → start', baseline: 'direct spawn → start' });
    r.checkAddedP50(`engine exit → succeeded visible, daemon-added p50 (${label})`, s.exitToVisible, s.exitToSeen, { measured: 'daemon exit → succeeded', baseline: 'direct exit → seen' });
    if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    return { createToStart: s.createToStart.p50, exitToVisible: s.exitToVisible.p50, spawnToStart: s.spawnToStart.p50, exitToSeen: s.exitToSeen.p50 };
  } finally {
    await daemon.stop();
    sweepProcesses(directDir);
  }
}
