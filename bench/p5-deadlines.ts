// P5 Deadlines: 500 resumable non-strict jobs (interactive_require_user_reply false) whose
// deadlines all fall due within one second, each of which must be enforced (auto-decided: the
// job leaves waiting_user) within 200 ms of its wait_deadline_at; and a sticky process's death
// noticed within 50 ms.
//
// Getting 500 jobs to wait with deadlines inside one second cannot be done by creating them with
// session_timeout_sec 1: each job's first turn is a Node process (~100 ms of CPU on this machine),
// so the waits, and their deadlines, would be spread over tens of seconds. Instead the jobs are
// created for real (session_timeout_sec 3600), run their first turn and wait; the daemon is then
// stopped (SIGTERM: resumable waits survive a restart), the wait_deadline_at of each job in
// state.json is moved to start + 3 s + i/500 s, and the daemon is started again: it re-arms the
// deadlines at recovery, exactly as it would after any restart. Lateness of each job is the
// daemon's timestamp of its status_changed waiting_user → queued event minus wait_deadline_at
// (also shown: the reply's replied_at in jobs/history, and when the event reached the client).
// Baseline: bare setTimeout timers due at the same 500 moments, in a Node process of their own.
// The target is checked on round 1: the default 4 slots, so resumed turns start engine processes
// while later deadlines fall due, as in use. Two diagnostic rounds replay the same stopped state:
// 8 slots (four node engines starting per core of this machine), and one slot held by a hanging
// job, so that no engine starts at all (the cost of the deadline handling alone).
//
// Process death: while the 500 jobs wait, a sticky job's fake engine is killed (SIGKILL); the
// time to the `finished` event with INTERACTION_PROCESS_LOST is measured, against a directly
// spawned sticky fake whose parent sees its `exit` event.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon, type DaemonLaunch } from './lib/daemon.js';
import { EventHub, type SeenEvent } from './lib/events.js';
import type { Job } from './lib/fixtures.js';
import { onCleanup } from './lib/cleanup.js';
import { fakeEngine, libModule } from './lib/paths.js';
import { engineIn, processAlive, sweepProcesses } from './lib/proc.js';
import type { BenchReporter } from './lib/report.js';
import { fmt, fmtSummary, summarize, type Summary } from './lib/stats.js';
import { benchEnv, nowMs, range, runPool, sleep } from './lib/util.js';
import { STICKY_ENV } from './p4-waiting.js';

const RESTART_LEAD_MS = 3000;
const SPREAD_MS = 1000;

/**
 * Bare Node timers due at the same moments as the daemon's deadlines, in a process of their own
 * started before the daemon restarts: the same machine, the same second, the same load.
 */
function bareTimers(first: number, count: number): { lateness: Promise<number[]> } {
  const child = spawn(process.execPath, [libModule('timer-baseline-main'), String(first), String(count), String(SPREAD_MS)], { env: benchEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
  const unregister = onCleanup(async () => {
    child.kill('SIGKILL');
  });
  const lateness = new Promise<number[]>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => {
      unregister();
      if (code === 0) resolve(JSON.parse(out) as number[]);
      else reject(new Error(`the bare timer baseline exited with ${String(code)}`));
    });
  });
  return { lateness };
}

/** A live fake (ACP mode) spawned directly: waits until it has started, kills it, returns kill → exit event. */
async function directDeath(argv: readonly string[], cwd: string): Promise<number> {
  const child = spawn(fakeEngine('gemini'), argv, { cwd, env: benchEnv(STICKY_ENV), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stderr.resume();
  child.stdout.resume();
  const started = join(cwd, '.fake-engine', 'pid');
  for (let tries = 0; !existsSync(started); tries += 1) {
    if (tries >= 500 || child.exitCode !== null) throw new Error(`the direct live fake did not start (${String(child.exitCode)})`);
    await sleep(10);
  }
  await sleep(20);
  const exited = new Promise<number>((resolve) => child.once('exit', () => resolve(nowMs())));
  const t0 = nowMs();
  child.kill('SIGKILL');
  return (await exited) - t0;
}

interface RoundResult {
  /** The daemon's slot count in the round (daemon/status). */
  slots: number;
  replied: Summary;
  enforced: Summary;
  received: Summary;
  bare: Summary;
}

/**
 * Moves the wait_deadline_at of every waiting job in a stopped daemon's state.json into one
 * second starting RESTART_LEAD_MS from now, starts the daemon on it, and measures how late each
 * job leaves waiting_user. With `holdSlot`, a hanging job takes the (single) slot first.
 */
async function deadlineRound(r: BenchReporter, launch: DaemonLaunch, jobs: readonly string[], holdSlot: boolean): Promise<RoundResult> {
  const statePath = join(launch.dir, 'state', 'state.json');
  const state = JSON.parse(await readFile(statePath, 'utf8')) as { jobs: Record<string, Job> };
  const base = Date.now() + RESTART_LEAD_MS;
  const due = new Map<string, number>();
  jobs.forEach((id, i) => {
    const job = state.jobs[id];
    if (job === undefined || job.status !== 'waiting_user') throw new Error(`job ${id} is not waiting in ${statePath}`);
    const at = base + Math.floor((i * SPREAD_MS) / jobs.length);
    job.wait_deadline_at = new Date(at).toISOString();
    due.set(id, at);
  });
  const stateText = `${JSON.stringify(state)}\n`;
  await writeFile(statePath, stateText);
  const baseline = bareTimers(base, jobs.length);
  const daemon = await BenchDaemon.start(launch);
  try {
    const client = await daemon.client();
    const hub = await EventHub.attach(await daemon.client());
    if (holdSlot) {
      const blocker = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang' } });
      await hub.waitStatus(blocker.job_id, ['running']);
    }
    const { slots } = await client.request<{ slots: { max: number } }>('daemon/status');
    const readyAt = Date.now();
    r.info(`restart with ${jobs.length} waiting jobs (state.json ${fmt(Buffer.byteLength(stateText) / 1024)} KiB): ready in ${fmt(daemon.readyMs)} ms; first deadline ${fmt(base - readyAt)} ms later`);
    if (readyAt > base - 100) throw new Error(`the restarted daemon was ready too late (${readyAt - base} ms after the first deadline); raise RESTART_LEAD_MS`);
    const moved = await Promise.all(jobs.map((id) => hub.waitFor(id, (e) => e.type === 'status_changed' && e.data?.['from'] === 'waiting_user', { timeoutMs: RESTART_LEAD_MS + SPREAD_MS + 60_000, what: 'leaving waiting_user' })));
    const lateness = { event: [] as number[], received: [] as number[], replied: [] as number[] };
    moved.forEach((event: SeenEvent, i) => {
      const at = due.get(jobs[i] as string) as number;
      if (event.data?.['to'] !== 'queued') throw new Error(`job ${event.job_id} left waiting_user for ${String(event.data?.['to'])}, not queued`);
      lateness.event.push(Date.parse(event.ts) - at);
      lateness.received.push(event.at - at);
    });
    for (const id of jobs) {
      const { interactions } = await client.request<{ interactions: Array<{ replied_at: string | null; resolution_mode: string | null }> }>('jobs/history', { job_id: id });
      const round = interactions[interactions.length - 1];
      if (round?.resolution_mode !== 'auto_decide_timeout' || round.replied_at === null) throw new Error(`job ${id} has no auto-decided reply in its history`);
      lateness.replied.push(Date.parse(round.replied_at) - (due.get(id) as number));
    }
    if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    return { slots: slots.max, replied: summarize(lateness.replied), enforced: summarize(lateness.event), received: summarize(lateness.received), bare: summarize(await baseline.lateness) };
  } finally {
    await daemon.stop();
  }
}

export const p5: Benchmark = {
  id: 'P5',
  title: 'deadlines due together, and a sticky process death',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const sizes = ctx.quick ? { deadlines: 16, deaths: 2 } : { deadlines: 500, deaths: 20 };
    const dir = await ctx.tempDir('daemon');
    const directDir = await ctx.tempDir('direct');
    const launch: DaemonLaunch = {
      dir,
      config: { max_concurrent: 8, max_queue: 10_000 },
      engines: { gemini: { env: STICKY_ENV, profile: 'sticky_process' }, codex: { profile: 'resumable' } },
    };
    const daemon = await BenchDaemon.start(launch);
    try {
      const client = await daemon.client();
      const hub = await EventHub.attach(await daemon.client());
      const t0 = performance.now();
      const jobs = await runPool(range(sizes.deadlines), 16, async () => {
        const job = await client.request<Job>('jobs/create', {
          skill_id: 'echo-both',
          engine: 'codex',
          execution_mode: 'interactive',
          interactive_require_user_reply: false,
          session_timeout_sec: 3600,
          input: { scenario: 'ask', emit: { greeting: 'g' } },
        });
        await hub.waitStatus(job.job_id, ['waiting_user']);
        return job.job_id;
      });
      r.info(`${jobs.length} resumable non-strict jobs waiting after ${fmt((performance.now() - t0) / 1000)} s`);

      // Sticky deaths, while those jobs wait; alternating with the direct baseline.
      const deaths: number[] = [];
      const direct: number[] = [];
      let argv: string[] | null = null;
      for (let i = 0; i < sizes.deaths; i += 1) {
        const job = await client.request<Job>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', session_timeout_sec: 600, input: { scenario: 'ask', emit: { greeting: 'g' } } });
        await hub.waitStatus(job.job_id, ['waiting_user']);
        const workspace = join(daemon.stateDir, 'runs', job.job_id, 'workspace');
        const pid = engineIn(workspace);
        argv ??= (JSON.parse((await readFile(join(workspace, '.fake-engine', 'calls.ndjson'), 'utf8')).split('\n')[0] as string) as { argv: string[] }).argv;
        if (pid === null || !processAlive(pid)) throw new Error(`the sticky engine of ${job.job_id} is not alive while its job waits`);
        await sleep(20);
        const from = hub.mark(job.job_id);
        const k0 = nowMs();
        process.kill(pid, 'SIGKILL');
        const finished = await hub.waitFinished(job.job_id, { from });
        const error = finished.data?.['error'] as { code?: string } | null | undefined;
        if (error?.code !== 'INTERACTION_PROCESS_LOST') throw new Error(`killed sticky job ${job.job_id} ended ${String(finished.data?.['status'])} ${error?.code ?? ''}, not INTERACTION_PROCESS_LOST`);
        deaths.push(finished.at - k0);
        const cwd = await ctx.tempDir(`direct/run-${i}`);
        direct.push(await directDeath(argv, cwd));
      }
      sweepProcesses(directDir);
      const death = summarize(deaths);
      const bareDeath = summarize(direct);
      r.info(`sticky death → INTERACTION_PROCESS_LOST received: ${fmtSummary(death)}`);
      r.info(`direct: kill → parent's exit event:           ${fmtSummary(bareDeath)}`);
      r.check({ metric: 'sticky process death noticed, max', value: death.max, unit: 'ms', baseline: bareDeath.max, baselineLabel: 'direct parent', target: { kind: 'value<=', limit: 50 } });

      // Stop (resumable waits survive), keep copies of the stopped state for the other rounds.
      await daemon.stop();
      if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
      const copies: string[] = [];
      for (const name of ['daemon-8-slots', 'daemon-no-engines']) {
        const copy = await ctx.tempDir(name);
        await cp(daemon.stateDir, join(copy, 'state'), { recursive: true });
        copies.push(copy);
      }
      const report = (title: string, round: RoundResult): void => {
        r.info(title);
        r.info(`  deadline → reply recorded (history replied_at): ${fmtSummary(round.replied)}`);
        r.info(`  deadline → status_changed to queued (event ts):  ${fmtSummary(round.enforced)}`);
        r.info(`  deadline → that event received by the client:    ${fmtSummary(round.received)}`);
        r.info(`  bare setTimeout lateness, same ${jobs.length} due times, same second: ${fmtSummary(round.bare)}`);
      };
      // Round 1 (the target): the default slot count, so resumed turns start engine processes
      // while later deadlines fall due, as they would in use.
      const { max_concurrent: _slots, ...defaultSlots } = launch.config ?? {};
      const real = await deadlineRound(r, { ...launch, config: defaultSlots }, jobs, false);
      report(`round 1, ${real.slots} slots, the default (resumed turns start engines meanwhile):`, real);
      // The diagnostic rounds run in a full run only: a quick run checks that the target's round works.
      if (!ctx.quick) {
        // Round 2 (diagnostic): twice the slots, on 2 cores: every engine start blocks the daemon's
        // event loop for the fork and exec of the child, and the disk syncs queue behind the engines'.
        const crowded = await deadlineRound(r, { ...launch, dir: copies[0] as string }, jobs, false);
        report(`round 2, ${crowded.slots} slots (diagnostic):`, crowded);
        // Round 3 (diagnostic): one slot held by a hanging job, so no resumed turn starts an
        // engine: what the deadline handling itself costs.
        const quiet = await deadlineRound(r, { ...launch, dir: copies[1] as string, config: { ...launch.config, max_concurrent: 1 } }, jobs, true);
        report('round 3, all slots busy (no engine starts; diagnostic):', quiet);
      }
      r.check({ metric: `${jobs.length} deadlines in 1 s: lateness max`, value: real.enforced.max, unit: 'ms', baseline: real.bare.max, baselineLabel: 'bare timers', target: { kind: 'value<=', limit: 200 } });
    } finally {
      await daemon.stop();
      sweepProcesses(directDir);
    }
  },
};
