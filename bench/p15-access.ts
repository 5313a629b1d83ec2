// P15 Access: what the access check (docs/access.md) adds to jobs/get and jobs/list, and what
// reading a connection's peer credentials costs.
//
// Three daemons alike but for `access`: "shared" (nobody is checked), "owner" (the default),
// both holding the same jobs, every one owned by nobody, who is no administrator; and a second
// "owner" daemon whose history is root's (as many jobs as P2's largest) but for a few of nobody's,
// so that a page of nobody's jobs is found only after every job is scanned.
//
// The measuring client runs in a process of its own (bench/lib/p15-client-main.ts). It connects
// to the owner-mode and the shared-mode daemon as root, then becomes nobody and connects again: a
// daemon reads a connection's credentials as they were at its connect. Root is an administrator,
// whom no rule checks, and every job is nobody's, so over the owner-mode daemon the same requests
// get the same answers as root and as nobody: the difference is the check alone, measured on one
// daemon (the target). The comparison the configuration offers, `"owner"` against `"shared"` as
// nobody, is shown too, beside the same two daemons as root, which neither checks: what differs
// between two daemons of the same build (a few hundredths) is as large as the check. The client
// alternates its connections request by request (jobs/get of a random job of its own, jobs/list's
// first page and a later one by `before`), so that drift of the machine affects all alike. As P1
// showed, where the scheduler puts a process decides much of a round trip on a small VM: the
// client is pinned to one CPU and the daemons to another, where there are two.
//
// Peer credentials are read on every accepted connection whatever the mode; they are timed in
// this process on the daemon's own function, against the cost of the connection itself.
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { encodeFinishedJob } from '../daemon/store/finished-log.js';
import { loadPeerCredentials } from '../rpc/peer-credentials.js';
import { allowedCpus, parseCpuList, pinProcess } from './lib/affinity.js';
import { onCleanup } from './lib/cleanup.js';
import { measurePeerCredentials, measureUserLookup } from './lib/connection-cost.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { finishedJob } from './lib/fixtures.js';
import type { ClientPlan, ClientReport, Latencies } from './lib/p15-client-main.js';
import { libModule } from './lib/paths.js';
import type { BenchReporter } from './lib/report.js';
import { fmt, fmtSummary, summarize } from './lib/stats.js';
import { benchEnv } from './lib/util.js';

/** nobody: a user every Linux host has, who is no administrator of a daemon run as root. */
const NOBODY = 65534;
const PAGE = 50;

interface Sizes {
  jobs: number;
  /** On the mixed daemon: root's jobs (its history), and nobody's. */
  rootJobs: number;
  nobodyJobs: number;
  warm: number;
  rounds: number;
  connections: number;
  lookups: number;
}

/** Why the client cannot become another user here, or null: it starts as root and becomes nobody. */
function cannotSwitchUser(): string | null {
  if (process.getuid?.() !== 0) return 'not root: the measuring client must connect as root and as another user, which takes root';
  const probe = spawnSync(process.execPath, ['-e', `process.setgroups([]); process.setgid(${NOBODY}); process.setuid(${NOBODY})`], { encoding: 'utf8' });
  if (probe.error !== undefined) return `node: ${probe.error.message}`;
  if (probe.status !== 0) return `node cannot become uid ${NOBODY} (exited ${String(probe.status)}: ${probe.stderr.trim()})`;
  return null;
}

/** Lets every user through `dir` and each folder above it up to the temp folder (search only: nothing is listed). */
async function traversable(dir: string): Promise<void> {
  const top = resolve(tmpdir());
  for (let folder = resolve(dir); folder !== top && folder.startsWith(`${top}/`); folder = dirname(folder)) {
    await chmod(folder, (await stat(folder)).mode | 0o001);
  }
}

/**
 * Root's history on the mixed daemon, written as its finished log before it starts (as P2 does):
 * `count` finished jobs owned by root, over the 30 days before now. Returns their ids.
 */
async function writeRootHistory(stateDir: string, count: number): Promise<string[]> {
  await mkdir(stateDir, { recursive: true });
  const now = Date.now();
  const jobs = Array.from({ length: count }, (_, i) => ({ ...finishedJob(i, count, ['echo-auto'], now), owner: { uid: 0, user: 'root' } }));
  await writeFile(join(stateDir, 'jobs-finished.ndjson'), `${jobs.map(encodeFinishedJob).join('\n')}\n`, { mode: 0o600 });
  return jobs.map((job) => job.job_id);
}

/** Runs the client (on `cpu` when given): it starts as root and becomes nobody (see the top). */
async function runClient(script: string, plan: ClientPlan, cpu: string | null, timeoutMs: number): Promise<ClientReport> {
  const command = [...(cpu === null ? [] : ['taskset', '--cpu-list', cpu]), process.execPath, script, JSON.stringify(plan)];
  const child = spawn(command[0] as string, command.slice(1), { cwd: dirname(script), env: benchEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const unregister = onCleanup(async () => {
    child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.once('exit', (c, s) => done([c, s])));
  clearTimeout(timer);
  unregister();
  if (code !== 0) throw new Error(`the client exited ${String(code ?? signal)}${signal === 'SIGKILL' ? ` (killed after ${timeoutMs} ms?)` : ''}: ${err.trim() || '(no stderr)'}`);
  return JSON.parse(out.slice(out.indexOf('measuring\n') + 'measuring\n'.length)) as ClientReport;
}

const CALLS = [
  { key: 'get', label: 'jobs/get' },
  { key: 'list', label: `jobs/list first page (${PAGE})` },
  { key: 'listBefore', label: 'jobs/list a later page (before)' },
] as const;

/** The figures of the client's report: the check on one daemon (checked), the two configurations and the rest (shown). */
function reportAccess(r: BenchReporter, report: ClientReport, sizes: Sizes): void {
  const { owner, ownerRoot, shared, sharedRoot, mixed } = report.samples;
  const p50 = (samples: Latencies, key: string): number => summarize(samples[key] ?? []).p50;
  for (const call of CALLS) {
    const checked = summarize(owner[call.key] ?? []);
    const unchecked = summarize(ownerRoot[call.key] ?? []);
    r.info(`${call.label}, access "owner", as nobody: ${fmtSummary(checked)}`);
    r.info(`${call.label}, access "owner", as root:   ${fmtSummary(unchecked)}`);
    r.check({
      metric: `${call.label} p50, ${sizes.jobs} jobs of a non-administrator, access "owner", checked`,
      value: checked.p50,
      unit: 'ms',
      baseline: unchecked.p50,
      baselineLabel: 'root on the same daemon, unchecked',
      target: { kind: 'ratio<=', limit: 1.05 },
      note: `p99 ${fmt(checked.p99)} ms against ${fmt(unchecked.p99)} ms (ratio ${fmt(checked.p99 / unchecked.p99)})`,
    });
    const configured = p50(owner, call.key) / p50(shared, call.key);
    const daemons = p50(ownerRoot, call.key) / p50(sharedRoot, call.key);
    r.info(`${call.label} p50 as nobody, access "owner" against "shared": ${fmt(p50(owner, call.key))} / ${fmt(p50(shared, call.key))} ms, ratio ${fmt(configured)}; the same two daemons as root, unchecked in both: ratio ${fmt(daemons)}`);
  }
  const filtered = summarize(mixed['list'] ?? []);
  const plain = summarize(owner['list'] ?? []);
  const mine = sizes.nobodyJobs + 1;
  r.info(
    `jobs/list first page as a user owning ${mine} of ${sizes.rootJobs + mine} jobs (every job scanned): ${fmtSummary(filtered)}; ` +
      `ratio ${fmt(filtered.p50 / plain.p50)} at p50 to a full page of the user's own jobs (${fmt(plain.p50)} ms); the first such list after the start ${fmt(mixed['firstList']?.[0])} ms`,
  );
  const deniedGet = summarize(mixed['deniedGet'] ?? []);
  r.info(`jobs/get of a job the caller may not see (JOB_NOT_FOUND): ${fmtSummary(deniedGet)}; ratio ${fmt(deniedGet.p50 / summarize(owner['get'] ?? []).p50)} at p50 to one of its own`);
}

/** The in-process figures: peer credentials per connection (checked), the user lookup behind a cache miss (shown). */
async function reportConnections(ctx: BenchContext, sizes: Sizes): Promise<void> {
  const r = ctx.report;
  if (!(await loadPeerCredentials())) {
    r.info('peer credentials skipped: libc could not be loaded through koffi (not Linux?), so the daemon reads none either');
    return;
  }
  const cost = await measurePeerCredentials(await ctx.tempDir('peer'), sizes.connections, Math.ceil(sizes.connections / 10));
  if (cost.last?.pid !== process.pid || cost.last.uid !== process.getuid?.()) throw new Error(`peerCredentials named ${JSON.stringify(cost.last)}, not this process`);
  const call = summarize(cost.call);
  const connect = summarize(cost.connect);
  r.info(`peerCredentials per accepted connection: ${fmtSummary(call, 'µs')}`);
  r.info(`connect + accept over the same socket:    ${fmtSummary(connect, 'µs')}`);
  r.check({
    metric: `peer credentials per connection p50 (${sizes.connections} connections; p99 ${fmt(call.p99)} µs)`,
    value: call.p50,
    unit: 'µs',
    baseline: connect.p50,
    baselineLabel: 'connect + accept',
    target: { kind: 'value<=', limit: 50 },
  });
  const users = await measureUserLookup(NOBODY, sizes.lookups);
  r.info(`user lookup of uid ${NOBODY} (${users.name ?? 'unknown'}, ${users.groups} group(s)) the cache does not hold, once a minute per user: ${fmtSummary(summarize(users.lookup), 'µs')}`);
}

async function measureAccess(ctx: BenchContext, sizes: Sizes): Promise<void> {
  const r = ctx.report;
  const problem = cannotSwitchUser();
  if (problem !== null) {
    r.info(`jobs/get and jobs/list skipped: ${problem}`);
    return;
  }
  const dirs = { shared: await ctx.tempDir('shared'), owner: await ctx.tempDir('owner'), mixed: await ctx.tempDir('mixed') };
  for (const dir of Object.values(dirs)) await traversable(dir);
  const script = libModule('p15-client-main');

  const launch = (dir: string, access: string): Promise<BenchDaemon> =>
    BenchDaemon.start({ dir, config: { access, socket_mode: '0666', max_concurrent: 1, max_queue: 100_000, retention: { max_age: null } } });
  const daemons: BenchDaemon[] = [];
  const ownCpus = allowedCpus(process.pid);
  try {
    const rootIds = await writeRootHistory(join(dirs.mixed, 'state'), sizes.rootJobs);
    const [shared, owner, mixed] = await Promise.all([launch(dirs.shared, 'shared'), launch(dirs.owner, 'owner'), launch(dirs.mixed, 'owner')]);
    daemons.push(shared, owner, mixed);

    const cpus = ownCpus === null ? [] : parseCpuList(ownCpus);
    let clientCpu: string | null = null;
    if (cpus.length >= 2) {
      const pinned = daemons.map((daemon) => pinProcess(daemon.pid, String(cpus[1])));
      const failed = pinned.find((p) => !p.ok);
      if (failed === undefined) clientCpu = String(cpus[0]);
      else r.info(`placement left to the scheduler, the daemons cannot be pinned: ${'reason' in failed ? failed.reason : ''}`);
    } else r.info('placement left to the scheduler: one CPU');
    if (clientCpu !== null) r.info(`the client on CPU ${clientCpu}, the three daemons on CPU ${String(cpus[1])}`);

    const plan: ClientPlan = {
      sockets: { shared: shared.socket, owner: owner.socket, mixed: mixed.socket },
      jobs: sizes.jobs,
      mixedJobs: sizes.nobodyJobs,
      warm: sizes.warm,
      rounds: sizes.rounds,
      limit: PAGE,
      foreignJob: rootIds[0] as string,
    };
    const report = await runClient(script, plan, clientCpu, ctx.quick ? 120_000 : 900_000);
    r.info(`the client ran as ${report.user}; made its jobs in ${fmt(report.fillMs.shared)} ms (shared), ${fmt(report.fillMs.owner)} ms (owner), ${fmt(report.fillMs.mixed)} ms (mixed); ${report.seen.cursors} later pages to pick from`);
    // A daemon that did not apply the rules would make every figure meaningless.
    const seen = report.seen;
    if (seen.ownerUser !== report.user) throw new Error(`a job the client made is owned by ${String(seen.ownerUser)}, not ${report.user}`);
    if (seen.mixedForeignListed !== 0 || seen.mixedListed !== sizes.nobodyJobs + 1) throw new Error(`the mixed daemon listed ${seen.mixedListed} jobs to the client, ${seen.mixedForeignListed} of them not its own`);
    if (seen.deniedCode !== 'JOB_NOT_FOUND') throw new Error(`a job of root's answered ${String(seen.deniedCode)} to the client, not JOB_NOT_FOUND`);
    reportAccess(r, report, sizes);
    for (const daemon of daemons) if (daemon.errorLines.length > 0) r.info(`daemon ${daemon.dir} logged errors:\n${daemon.errorLines.join('\n')}`);
  } finally {
    for (const daemon of daemons) await daemon.stop();
  }
}

export const p15: Benchmark = {
  id: 'P15',
  title: 'the access check on jobs/get and jobs/list, and peer credentials per connection',
  async run(ctx: BenchContext): Promise<void> {
    const sizes: Sizes = ctx.quick
      ? { jobs: 100, rootJobs: 1000, nobodyJobs: 5, warm: 50, rounds: 200, connections: 200, lookups: 50 }
      : { jobs: 2000, rootJobs: 50_000, nobodyJobs: 20, warm: 300, rounds: 3000, connections: 2000, lookups: 500 };
    await reportConnections(ctx, sizes);
    await measureAccess(ctx, sizes);
  },
};
