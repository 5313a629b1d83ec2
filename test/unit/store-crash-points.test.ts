// The files store at every crash point: many jobs' lives, prunes (with their run folders),
// compactions of the hot state and a rewrite of the finished log run once, and a picture of the
// state folder is taken just before each durable step (daemon/store/crash-points.ts) — and, for
// an append, a second picture with half of its bytes written (a torn line). Each picture is then
// loaded as a daemon starting there would, its start-up sweep run, and checked: no removed job
// returns, no finished job changes status, every acknowledged change is there, nothing that was
// never written appears, no run folder is left without a record and no record without its folder.
import t from 'tap';
import { appendFileSync, cpSync, existsSync, mkdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Job } from '../../daemon/model/job.js';
import { Retention } from '../../daemon/jobs/retention.js';
import { isTerminal } from '../../daemon/model/states.js';
import { createLogger } from '../../daemon/base/logger.js';
import { watchCrashPoints, type CrashPoint } from '../../daemon/store/crash-points.js';
import { LowdbStore } from '../../daemon/store/lowdb-store.js';
import type { Store } from '../../daemon/store/store.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeJob } from '../helpers/jobs.js';

/** What the store had acknowledged of a job, and what was being written of it. */
interface Known {
  acked: Job | null;
  inflight: Job | null;
  removal: 'none' | 'inflight' | 'acked';
}

type Model = Map<string, Known>;

interface Picture {
  index: number;
  point: CrashPoint;
  torn: boolean;
  dir: string;
  model: Model;
}

const SMALL = { compactAtBytes: 2048, rewriteAtDeadBytes: 1024 };

function copyModel(model: Model): Model {
  return new Map([...model].map(([id, known]) => [id, { ...known }]));
}

/** Runs the jobs' lives on a store in `dir`, taking a picture into `pictures` at each crash point. */
async function live(dir: string, picturesDir: string): Promise<Picture[]> {
  const runsDir = join(dir, 'runs');
  await mkdir(runsDir, { recursive: true });
  const model: Model = new Map();
  const pictures: Picture[] = [];
  const take = (point: CrashPoint, torn: boolean): void => {
    const index = pictures.length;
    const to = join(picturesDir, String(index));
    cpSync(dir, to, { recursive: true });
    if (torn && point.text !== undefined) {
      const bytes = Buffer.from(point.text);
      appendFileSync(join(to, relative(dir, point.path)), bytes.subarray(0, Math.max(1, bytes.length >> 1)));
    }
    pictures.push({ index, point, torn, dir: to, model: copyModel(model) });
  };
  const stop = watchCrashPoints((point) => {
    take(point, false);
    if (point.step === 'append') take(point, true);
  });
  try {
    let store = await LowdbStore.open(dir, () => new Date(), SMALL);
    const clock = new FakeClock(Date.parse('2026-06-01T00:00:00Z'));
    const known = (id: string): Known => {
      let entry = model.get(id);
      if (entry === undefined) model.set(id, (entry = { acked: null, inflight: null, removal: 'none' }));
      return entry;
    };
    const put = async (job: Job): Promise<void> => {
      const entry = known(job.job_id);
      entry.inflight = job;
      await store.putJob(job);
      entry.acked = job;
      entry.inflight = null;
    };
    // As `jobs/create` does on the files store: the run folder first, then the record.
    const create = async (n: number): Promise<Job> => {
      const job = makeJob(n, { skill_version: 'x'.repeat(200) });
      mkdirSync(join(runsDir, job.job_id, 'workspace'), { recursive: true });
      await put(job);
      return job;
    };
    const finish = (job: Job, status: 'succeeded' | 'failed' | 'canceled', n: number): Promise<void> =>
      put({ ...job, status, finished_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() });
    const retentionOn = (s: Store): Retention =>
      new Retention({
        store: watchedRemovals(s, model), runsDir, clock, logger: createLogger('silent'), policy: { max_age_ms: null, max_jobs: null, interval_ms: 3600_000 },
        settled: async () => undefined, closeEvents: async () => undefined, orphanGraceMs: 0,
      });
    // Twenty jobs: some run and end, some are canceled while queued, some stay active.
    const jobs = [];
    for (let n = 1; n <= 20; n += 1) jobs.push(await create(n));
    for (const [i, job] of jobs.entries()) {
      if (i % 4 === 3) continue; // stays queued
      if (i % 4 === 2) {
        await finish(job, 'canceled', i);
        continue;
      }
      const running = { ...job, status: 'running' as const, attempt: 1, started_at: job.created_at };
      await put(running);
      if (i % 4 === 0) await finish(running, i % 8 === 0 ? 'failed' : 'succeeded', i);
    }
    await retentionOn(store).prune({ older_than_ms: 0 }, false);
    // More lives, some at once (one group commit), then a second prune and a graceful stop.
    const more = await Promise.all([21, 22, 23, 24].map((n) => create(n)));
    await Promise.all(more.map((job, i) => finish(job, 'succeeded', 30 + i)));
    const runningOnes = jobs.filter((_, i) => i % 4 === 1);
    for (const [i, job] of runningOnes.entries()) await finish({ ...job, status: 'running', attempt: 1, started_at: job.created_at }, 'succeeded', 40 + i);
    await retentionOn(store).prune({ older_than_ms: 0 }, false);
    await store.close();
    // A start after the stop, and a last prune of what is left.
    store = await LowdbStore.open(dir, () => new Date(), SMALL);
    for (const job of jobs.filter((_, i) => i % 4 === 3)) await finish(job, 'canceled', 60);
    await retentionOn(store).prune({ older_than_ms: 0 }, false);
    await store.close();
    take({ step: 'append', path: join(dir, 'end') }, false);
  } finally {
    stop();
  }
  return pictures;
}

/** The store as retention sees it, with each removal noted in the model as it is made and as it is acknowledged. */
function watchedRemovals(store: Store, model: Model): Store {
  return {
    expiredJobs: (query) => store.expiredJobs(query),
    existingJobs: (ids) => store.existingJobs(ids),
    removeJobs: async (ids) => {
      for (const id of ids) (model.get(id) as Known).removal = 'inflight';
      const removed = await store.removeJobs(ids);
      for (const id of ids) (model.get(id) as Known).removal = removed.includes(id) ? 'acked' : 'none';
      return removed;
    },
  } as Partial<Store> as Store;
}

/** What is wrong with the state a daemon starting from `picture` finds; empty when nothing is. */
async function problemsOf(picture: Picture): Promise<string[]> {
  const problems: string[] = [];
  const store = await LowdbStore.open(picture.dir, () => new Date(), SMALL);
  try {
    const runsDir = join(picture.dir, 'runs');
    const retention = new Retention({
      // Its clock past the folders' times: with no grace, every folder no job names goes.
      store, runsDir, clock: new FakeClock(Date.now() + 86_400_000), logger: createLogger('silent'), policy: { max_age_ms: null, max_jobs: null, interval_ms: 3600_000 },
      settled: async () => undefined, closeEvents: async () => undefined, orphanGraceMs: 0,
    });
    await retention.round(); // the start-up sweep: run folders no job names
    const listed = (await store.listJobs({ limit: 1000 })).jobs;
    for (const job of listed) if (!picture.model.has(job.job_id)) problems.push(`${job.job_id} is there but was never written`);
    for (const [id, known] of picture.model) {
      const job = await store.getJob(id);
      const status = job?.status ?? 'absent';
      if (known.removal === 'acked' && job !== undefined) problems.push(`${id} came back as ${status} after its removal was acknowledged`);
      if (known.removal !== 'none' && job !== undefined && job.status !== known.acked?.status) problems.push(`${id} being removed is ${status}, not ${String(known.acked?.status)}`);
      if (known.removal !== 'none') continue;
      const allowed = [known.acked?.status, known.inflight?.status].filter((s) => s !== undefined);
      if (known.acked === null && job === undefined) continue; // its creation was not acknowledged
      if (!allowed.includes(status as Job['status'])) problems.push(`${id} is ${status}; acknowledged ${String(known.acked?.status)}, being written ${String(known.inflight?.status)}`);
      if (known.acked !== null && isTerminal(known.acked.status) && status !== known.acked.status) problems.push(`${id} finished ${known.acked.status} and is now ${status}`);
    }
    const folders = (await readdir(runsDir)).filter((name) => !name.startsWith('.'));
    for (const name of folders) if (!(await store.hasJob(name))) problems.push(`run folder ${name} has no record`);
    for (const job of listed) if (!existsSync(join(runsDir, job.job_id))) problems.push(`${job.job_id} has no run folder`);
  } finally {
    await store.close();
  }
  return problems;
}

t.test('at every crash point of jobs\' lives and prunes, a start finds one truth per job', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'skilld-crash-points-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'pictures'));
  const pictures = await live(join(root, 'state'), join(root, 'pictures'));
  const steps = new Set(pictures.map((p) => `${p.point.step} ${p.point.path.split('/').pop() ?? ''}`));
  // Every kind of durable step was reached: appends to both logs, compactions, a rewrite, folder removals.
  for (const step of ['append state.wal', 'append jobs-finished.ndjson', 'cut state.wal', 'replace state.json', 'rename state.json', 'rename jobs-finished.ndjson']) t.ok(steps.has(step), `the life reached "${step}"`);
  t.ok([...steps].some((s) => s.startsWith('remove_folder')), 'run folders were removed');
  t.ok(pictures.length > 100, `${pictures.length} crash points`);
  let failing = 0;
  for (const picture of pictures) {
    const problems = await problemsOf(picture);
    if (problems.length === 0) continue;
    failing += 1;
    if (failing <= 5) t.fail(`crash before ${picture.point.step} of ${picture.point.path.split('/').pop() ?? ''} (#${picture.index}${picture.torn ? ', torn' : ''})`, { problems });
  }
  t.equal(failing, 0, 'no crash point loses, invents or revives a job');
});
