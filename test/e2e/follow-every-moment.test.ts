// A subscriber gets every event of a job exactly once, in order, whenever it subscribes: right
// after jobs/create, at each moment the job's events are being stored, after it finished; on this
// daemon's store and, on PostgreSQL, on another host than the one that runs the job
// (docs/protocol.md, "job/event"; docs/cluster.md, "Guarantees").
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_NAMES, FIXTURES, TEST_STORE, TestDaemon, testPostgres, type JobView } from '../helpers/daemon.js';
import type { RpcClient } from '../../rpc/client.js';

const ROUNDS = 10;
const MANY = { max_connections: 1024 };

interface JobEvent {
  job_id: string;
  seq: number;
  type: string;
}

/** One subscription on a connection of its own: the seqs of the job's events it got, until `finished`. */
async function follow(daemon: TestDaemon, jobId: string, afterSeq: number): Promise<{ afterSeq: number; seqs: number[] }> {
  const client = await daemon.client();
  const seqs: number[] = [];
  const finished = new Promise<void>((resolve) => {
    client.on('job/event', (params) => {
      const event = params as JobEvent;
      if (event.job_id !== jobId) return;
      seqs.push(event.seq);
      if (event.type === 'finished') resolve();
    });
  });
  await client.request('jobs/subscribe', { job_id: jobId, after_seq: afterSeq });
  await finished;
  client.close();
  return { afterSeq, seqs };
}

/**
 * Creates a job on `runner` and follows it on `watcher`: one subscription right after the create,
 * then, at each event a live subscriber of every job hears, three more (from the start, from just
 * before that event, from just after it). Every one must end with exactly the seqs after its
 * `after_seq`, in order.
 */
async function everyMoment(t: Test, runner: RpcClient, watcher: TestDaemon, create: Record<string, unknown>): Promise<void> {
  const spy = await watcher.client();
  let jobId = '';
  const early: JobEvent[] = [];
  const spied: number[] = [];
  const follows: Array<Promise<{ afterSeq: number; seqs: number[] }>> = [];
  let last = 0;
  const ended = new Promise<void>((resolve) => {
    spy.on('job/event', (params) => {
      const event = params as JobEvent;
      if (jobId === '') early.push(event);
      else if (event.job_id === jobId) {
        spied.push(event.seq);
        follows.push(follow(watcher, jobId, 0), follow(watcher, jobId, event.seq - 1));
        // Nothing comes after `finished`: a subscription from after it would wait for ever.
        if (event.type !== 'finished') follows.push(follow(watcher, jobId, event.seq));
        else {
          last = event.seq;
          resolve();
        }
      }
    });
  });
  await spy.request('jobs/subscribe', {});
  const job = await runner.request<JobView>('jobs/create', create);
  jobId = job.job_id;
  follows.push(follow(watcher, jobId, 0));
  await ended;
  follows.push(follow(watcher, jobId, 0), follow(watcher, jobId, last - 1));
  const seen = await Promise.all(follows);
  const wrong = seen.filter((f) => JSON.stringify(f.seqs) !== JSON.stringify(Array.from({ length: last - f.afterSeq }, (_, i) => f.afterSeq + i + 1)));
  t.same(wrong, [], `${seen.length} subscriptions to ${jobId} (${last} events): each got every event after its after_seq once, in order`);
  const before = early.filter((e) => e.job_id === jobId).map((e) => e.seq);
  t.same([...before, ...spied], Array.from({ length: last }, (_, i) => i + 1), 'a subscription to every job, made before the job, got each of its events once, in order');
  spy.close();
}

const jobs: Array<[string, Record<string, unknown>]> = [
  ['gemini, a one-shot turn', { skill_id: 'echo-auto', engine: 'gemini', input: { scenario: 'ok' } }],
  ['codex, a chatty turn', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'chatty', chatty_bytes: 48 * 1024 } }],
];

t.test(`one daemon (${TEST_STORE} store): subscribers at every moment of a job's life`, async (t) => {
  const daemon = await TestDaemon.start({ config: MANY });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  for (const [name, create] of jobs) {
    for (let round = 1; round <= ROUNDS; round += 1) await t.test(`${name}, round ${round}`, (t) => everyMoment(t, client, daemon, create));
  }
});

// Once, in the files-store run of the suites: it makes a shared database of its own either way.
const pg = TEST_STORE === 'files' ? await testPostgres() : 'run with the files-store suites';
t.test('two hosts on one PostgreSQL: subscribers on the host that does not run the job', { skip: typeof pg === 'string' ? pg : false }, async (t) => {
  if (typeof pg === 'string') return;
  const url = await pg.createDatabase('follow');
  const start = async (id: string, config: Record<string, unknown> = {}): Promise<TestDaemon> => {
    const dir = await mkdtemp(join(tmpdir(), `skilld-${id}-`));
    const daemon = await TestDaemon.start({ dir, store: 'files', config: { ...MANY, store: url, host_id: id, ...config } });
    t.teardown(async () => {
      await daemon.stop();
      await rm(dir, { recursive: true, force: true });
    });
    return daemon;
  };
  const runner = await start('runner');
  // The watcher has no engine it can start, so it claims no job: every job runs on the runner.
  const watcher = await start('watcher', { engines: Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [join(FIXTURES, 'no-such-engine')] }])) });
  const client = await runner.client();
  for (const [name, create] of jobs) {
    for (let round = 1; round <= ROUNDS; round += 1) await t.test(`${name}, round ${round}`, (t) => everyMoment(t, client, watcher, create));
  }
});
