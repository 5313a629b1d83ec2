// Chaos on a cluster (docs/cluster.md): 60 mixed jobs over three daemons on one PostgreSQL, while
// one daemon is SIGKILLed twice (once left down until another host takes it for gone, once
// started again at once) and PostgreSQL itself crashes and restarts. Replies and cancels go to
// whichever daemon is up, not to the one that holds the job. Afterwards: every acknowledged job
// ended in a state the chaos explains, every acknowledged reply is in its job's history, no job
// ran on two hosts, and no engine process is left.
import t from 'tap';
import { jobProcesses } from '../helpers/job-processes.js';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonUnreachableError, RpcCallError, type RpcClient } from '../../rpc/client.js';
import { alive, ENGINE_NAMES, TestDaemon, testPostgres, waitUntilGone, type JobView } from '../helpers/daemon.js';
import type { ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;

const HOSTS = ['host-a', 'host-b', 'host-c'] as const;
type HostId = (typeof HOSTS)[number];
type Kind = 'auto' | 'ask' | 'hang';

/** What the chaos can explain: the host running the turn went away. Anything else is a failure. */
const EXPLAINED: Record<Kind, string[]> = {
  auto: ['succeeded', 'failed:DAEMON_RESTART_INTERRUPTED'],
  ask: ['succeeded', 'failed:DAEMON_RESTART_INTERRUPTED'],
  hang: ['canceled:CANCELED_BY_USER', 'failed:DAEMON_RESTART_INTERRUPTED'],
};

/** Errors after which a request can be sent again: nothing of it was kept, or it is idempotent. */
const RETRYABLE = new Set(['STORAGE_UNAVAILABLE', 'JOB_OWNER_UNREACHABLE', 'SERVER_BUSY']);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

class Cluster {
  readonly daemons = new Map<HostId, TestDaemon>();
  readonly clients = new Map<HostId, RpcClient>();
  readonly dirs = new Map<HostId, string>();
  #next = 0;

  constructor(readonly url: string) {}

  async start(id: HostId): Promise<void> {
    const dir = this.dirs.get(id) ?? (await mkdtemp(join(tmpdir(), `skilld-chaos-${id}-`)));
    this.dirs.set(id, dir);
    const config = { store: this.url, host_id: id, lease_ttl_ms: 5000, pinned_grace_sec: 3600, max_concurrent: 3, max_queue: 100 };
    const daemon = await TestDaemon.start({ dir, store: 'files', config });
    this.daemons.set(id, daemon);
    this.clients.set(id, await daemon.client());
  }

  async kill(id: HostId): Promise<void> {
    this.clients.delete(id);
    await this.daemons.get(id)?.kill();
  }

  /**
   * Sends a request to the daemons that are up, in turn, again after a retryable error or a lost
   * connection while `again` allows (bounded). The last error is thrown.
   */
  async ask<T>(method: string, params: Record<string, unknown>, again: (error: unknown) => boolean = retryable): Promise<T> {
    let last: unknown = new Error('no daemon was up');
    for (let attempt = 0; attempt < 600; attempt += 1) {
      const up = HOSTS.filter((h) => this.clients.has(h));
      const client = this.clients.get(up[this.#next++ % Math.max(up.length, 1)] as HostId);
      if (client !== undefined) {
        try {
          return await client.request<T>(method, params);
        } catch (error) {
          last = error;
          if (!again(error)) throw error;
        }
      }
      await sleep(50);
    }
    throw last;
  }

  /**
   * The hosts where an engine ran for the job, by the fake engines' ledger. (A host killed after
   * it prepared a run folder and before it started the engine leaves the folder: the job never
   * started, so it went back to the queue and ran elsewhere.)
   */
  ranOn(jobId: string): HostId[] {
    return HOSTS.filter((h) => existsSync(this.#ledger(h, jobId)));
  }

  #ledger(h: HostId, jobId: string): string {
    return join(this.dirs.get(h) as string, 'state', 'runs', jobId, 'workspace', '.fake-engine', 'calls.ndjson');
  }

  /** Every engine process any host started for the job, from the fake engines' own ledger. */
  async enginePids(jobId: string): Promise<number[]> {
    const pids: number[] = [];
    for (const h of this.ranOn(jobId)) {
      const ledger = await readFile(this.#ledger(h, jobId), 'utf8');
      for (const line of ledger.split('\n').filter((l) => l !== '')) pids.push((JSON.parse(line) as { pid: number }).pid);
    }
    return pids;
  }
}

function retryable(error: unknown): boolean {
  if (error instanceof DaemonUnreachableError) return true;
  return error instanceof RpcCallError && RETRYABLE.has(error.dataCode);
}

interface Tracked {
  job_id: string;
  kind: Kind;
  /** The reply the daemon acknowledged, if one was. */
  replied?: string;
}

t.test('60 mixed jobs, one daemon SIGKILLed twice, PostgreSQL restarted: 0 acknowledged jobs or replies lost, 0 run twice, 0 stuck, 0 engines left', { skip }, async (t) => {
  const postgres = started as ThrowawayPostgres;
  const cluster = new Cluster(await postgres.createDatabase('chaos'));
  t.teardown(async () => {
    for (const daemon of cluster.daemons.values()) await daemon.stop();
    for (const dir of cluster.dirs.values()) await rm(dir, { recursive: true, force: true });
  });
  for (const id of HOSTS) await cluster.start(id);

  const jobs: Tracked[] = [];
  const followers: Promise<void>[] = [];
  const wave = async (from: number): Promise<void> => {
    for (let i = from; i < from + 20; i += 1) {
      const kind: Kind = i % 10 < 6 ? 'auto' : i % 10 < 9 ? 'ask' : 'hang';
      const input = kind === 'auto' ? { emit: { greeting: `n${i}` }, delay_ms: 200 + (i % 5) * 100 } : { scenario: kind };
      // A create whose answer was lost may or may not have stored the job: only acknowledged ones are tracked, and a create is sent once.
      const created = await cluster.ask<JobView>('jobs/create', {
        skill_id: 'echo-both', engine: ENGINE_NAMES[i % 4], input, ...(kind === 'ask' ? { execution_mode: 'interactive' } : {}),
      }, (error) => error instanceof RpcCallError && RETRYABLE.has(error.dataCode)).catch(() => null);
      if (created === null) continue;
      const job: Tracked = { job_id: created.job_id, kind };
      jobs.push(job);
      if (kind === 'ask') followers.push(answer(cluster, job));
      if (kind === 'hang') followers.push(cancelOnceRunning(cluster, job));
    }
  };

  await wave(0);
  await untilRunning(cluster, jobs, 5);
  // First kill: B stays down until another host takes it for gone and settles its jobs.
  await cluster.kill('host-b');
  await Promise.race(['host-a', 'host-c'].map((h) => cluster.daemons.get(h as HostId)?.logged((line) => line.includes('took a host for gone'))));
  await cluster.start('host-b');

  await wave(20);
  await untilRunning(cluster, jobs, 5);
  await postgres.crash();
  await sleep(300);
  await postgres.restart();

  await wave(40);
  await untilRunning(cluster, jobs, 5);
  // Second kill: B starts again at once, and settles its own jobs as any restart does.
  await cluster.kill('host-b');
  await cluster.start('host-b');

  await Promise.all(followers);
  const outcomes = new Map<string, JobView>();
  for (const job of jobs) outcomes.set(job.job_id, await untilTerminal(cluster, job.job_id));

  t.equal(jobs.length, 60, 'every create was acknowledged (a lost answer would leave it out, not fail the count silently)');
  const unexplained = jobs.filter((job) => {
    const view = outcomes.get(job.job_id) as JobView;
    return !EXPLAINED[job.kind].includes(view.error === null ? view.status : `${view.status}:${view.error.code}`);
  }).map((job) => {
    const view = outcomes.get(job.job_id) as JobView;
    return { ...job, status: view.status, error: view.error };
  });
  t.same(unexplained, [], 'every job ended in a state the chaos explains');

  const lostReplies: string[] = [];
  for (const job of jobs.filter((j) => j.replied !== undefined)) {
    const history = await cluster.ask<{ interactions: Array<{ response: unknown }> }>('jobs/history', { job_id: job.job_id });
    if (!history.interactions.some((i) => i.response === job.replied)) lostReplies.push(job.job_id);
    const view = outcomes.get(job.job_id) as JobView;
    if (view.status === 'succeeded') {
      const result = await cluster.ask<{ output: { reply?: string } }>('jobs/result', { job_id: job.job_id });
      if (result.output.reply !== job.replied) lostReplies.push(`${job.job_id} (output)`);
    }
  }
  t.same(lostReplies, [], 'every acknowledged reply is stored, and a job that went on got it');

  const twice = jobs.filter((job) => cluster.ranOn(job.job_id).length > 1);
  t.same(twice.map((job) => job.job_id), [], 'no job ran on two hosts');
  const ledger = (await Promise.all(jobs.map((job) => cluster.enginePids(job.job_id)))).flat();
  // The ledger's pids are the engines' own (a sandbox's, in one); what is left is found by job.
  const left = (): number[] => jobs.flatMap((job) => jobProcesses(job.job_id));
  for (const pid of left()) await waitUntilGone(pid);
  t.same(left(), [], `no engine process is left (${ledger.length} started)`);

  const tally = (kind: Kind): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const job of jobs.filter((j) => j.kind === kind)) {
      const view = outcomes.get(job.job_id) as JobView;
      const key = view.error === null ? view.status : view.error.code;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };
  t.comment(`outcomes: auto ${JSON.stringify(tally('auto'))}, interactive ${JSON.stringify(tally('ask'))}, canceled ${JSON.stringify(tally('hang'))}; replies acknowledged ${jobs.filter((j) => j.replied !== undefined).length}`);
  t.ok(Object.keys(tally('auto')).includes('succeeded') && Object.keys(tally('ask')).includes('succeeded'), 'work went on through the chaos');
});

/** Waits until at least `count` of the jobs run or ran, so that a kill finds work in flight. */
async function untilRunning(cluster: Cluster, jobs: Tracked[], count: number): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    const views = await Promise.all(jobs.map((job) => cluster.ask<JobView>('jobs/get', { job_id: job.job_id })));
    if (views.filter((v) => v.status !== 'queued').length >= count) return;
    await sleep(50);
  }
}

async function untilTerminal(cluster: Cluster, jobId: string): Promise<JobView> {
  for (let i = 0; i < 1200; i += 1) {
    const view = await cluster.ask<JobView>('jobs/get', { job_id: jobId });
    if (['succeeded', 'failed', 'canceled'].includes(view.status)) return view;
    await sleep(100);
  }
  throw new Error(`job ${jobId} is stuck`);
}

/** Answers an interactive job's question once it asks, through whichever daemon is up; the same idempotency key on every try. */
async function answer(cluster: Cluster, job: Tracked): Promise<void> {
  const text = `--reply to ${job.job_id}`;
  for (let i = 0; i < 1200; i += 1) {
    const view = await cluster.ask<JobView>('jobs/get', { job_id: job.job_id });
    if (['succeeded', 'failed', 'canceled'].includes(view.status)) return;
    if (view.status === 'waiting_user') {
      const sent = await cluster.ask('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: text, idempotency_key: 'chaos' }).then(
        () => true,
        (error: unknown) => {
          // The job ended meanwhile (its host was taken for gone): there is nothing to answer.
          if (error instanceof RpcCallError && error.dataCode === 'JOB_NOT_WAITING') return false;
          throw error;
        },
      );
      if (sent) job.replied = text;
      return;
    }
    await sleep(100);
  }
}

async function cancelOnceRunning(cluster: Cluster, job: Tracked): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    const view = await cluster.ask<JobView>('jobs/get', { job_id: job.job_id });
    if (view.status !== 'queued') break;
    await sleep(100);
  }
  await cluster.ask('jobs/cancel', { job_id: job.job_id });
}
