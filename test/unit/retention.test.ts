// Retention's rounds on a real files store and real run folders, with a clock the test moves:
// the policy by age and by count, each job's lock awaited before it goes, its run folder removed
// after its record; the sweep of folders no job names (after the grace), and of removals a crash
// left half done; active jobs never touched.
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../daemon/model/job.js';
import { ORPHAN_GRACE_MS, Retention } from '../../daemon/jobs/retention.js';
import { createLogger } from '../../daemon/base/logger.js';
import { LowdbStore } from '../../daemon/store/lowdb-store.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeJob } from '../helpers/jobs.js';

const DAY = 24 * 3600 * 1000;

async function setUp(t: Test, policy: { max_age_ms: number | null; max_jobs: number | null }) {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-retention-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const runsDir = join(dir, 'runs');
  await mkdir(runsDir);
  const store = await LowdbStore.open(dir, () => new Date());
  t.teardown(() => store.close());
  const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));
  const settled: string[] = [];
  const closed: string[] = [];
  const retention = new Retention({
    store, runsDir, clock, logger: createLogger('silent'), policy: { ...policy, interval_ms: 3600_000 },
    settled: async (id) => void settled.push(id),
    closeEvents: async (id) => void closed.push(id),
    orphanGraceMs: ORPHAN_GRACE_MS,
  });
  /** A job finished `daysAgo` before the clock's now, with a run folder. */
  const put = async (n: number, daysAgo: number | null, extra: Partial<Job> = {}): Promise<string> => {
    const job = daysAgo === null ? makeJob(n, { status: 'waiting_user', ...extra }) : makeJob(n, { status: 'succeeded', finished_at: new Date(clock.now().getTime() - daysAgo * DAY).toISOString(), ...extra });
    await store.putJob(job);
    await mkdir(join(runsDir, job.job_id, 'workspace'), { recursive: true });
    return job.job_id;
  };
  const folders = async (): Promise<string[]> => (await readdir(runsDir)).sort();
  return { store, runsDir, clock, retention, settled, closed, put, folders };
}

t.test('a round removes jobs older than max_age, and their run folders; newer and active ones stay', async (t) => {
  const { retention, settled, closed, put, folders, store } = await setUp(t, { max_age_ms: 30 * DAY, max_jobs: null });
  const old1 = await put(1, 40);
  const old2 = await put(2, 31);
  const young = await put(3, 29);
  const waiting = await put(4, null);
  const answer = await retention.round();
  t.same([answer.count, answer.job_ids], [2, [old1, old2]]);
  t.equal(answer.selection.finished_before, '2026-01-30T00:00:00.000Z');
  t.same(settled, [old1, old2], 'each job\'s lock was awaited first');
  t.same(closed, [old1, old2], 'its event log stored and forgotten first');
  t.same(await folders(), [young, waiting]);
  t.same([...(await store.existingJobs([old1, old2, young, waiting]))], [young, waiting]);
});

t.test('max_jobs keeps the newest finished; either limit removes', async (t) => {
  const { retention, put, folders } = await setUp(t, { max_age_ms: 30 * DAY, max_jobs: 2 });
  const ids = [await put(1, 5), await put(2, 4), await put(3, 3), await put(4, 2), await put(5, null)];
  const answer = await retention.round();
  t.same(answer.job_ids, ids.slice(0, 2));
  t.same(await folders(), ids.slice(2));
});

t.test('jobs/prune: a dry run removes nothing; a selection overrides the policy; a policy of no limits removes nothing', async (t) => {
  const { retention, put, folders } = await setUp(t, { max_age_ms: null, max_jobs: null });
  const ids = [await put(1, 3), await put(2, 2, { status: 'failed', error: { code: 'OUTPUT_INVALID', message: 'x' } }), await put(3, 1)];
  t.same((await retention.prune({}, false)).count, 0, 'the policy keeps every job');
  const dry = await retention.prune({ older_than_ms: 0 }, true);
  t.same([dry.dry_run, dry.count, dry.job_ids], [true, 3, ids]);
  t.same(await folders(), ids);
  t.same((await retention.prune({ statuses: ['failed'] }, false)).job_ids, [ids[1]]);
  t.same((await retention.prune({ older_than_ms: 1.5 * DAY }, false)).job_ids, [ids[0]]);
  t.same(await folders(), [ids[2]]);
});

t.test('the sweep: a folder no job names goes after the grace; what a crash left aside goes; a job\'s folder stays', async (t) => {
  const { retention, runsDir, clock, put, folders } = await setUp(t, { max_age_ms: null, max_jobs: null });
  const kept = await put(1, 1);
  await mkdir(join(runsDir, 'job-orphan-old', 'workspace'), { recursive: true });
  await mkdir(join(runsDir, 'job-orphan-new'), { recursive: true });
  await mkdir(join(runsDir, '.removing-job-half', 'workspace'), { recursive: true });
  const now = clock.now().getTime() / 1000;
  await utimes(join(runsDir, 'job-orphan-old'), now - ORPHAN_GRACE_MS / 1000 - 1, now - ORPHAN_GRACE_MS / 1000 - 1);
  await utimes(join(runsDir, 'job-orphan-new'), now - 60, now - 60);
  await retention.round();
  t.same(await folders(), [kept, 'job-orphan-new'], 'a folder younger than the grace may be a job being created');
  t.notOk(existsSync(join(runsDir, '.removing-job-half')));
});

t.test('background rounds come every interval from the first a little after start, and stop with stop()', async (t) => {
  const { retention, clock, put, store } = await setUp(t, { max_age_ms: DAY, max_jobs: null });
  const old = await put(1, 2);
  retention.start();
  clock.advance(59_000);
  await retention.idle();
  t.ok(await store.hasJob(old), 'not before the first round');
  clock.advance(1000);
  await retention.idle();
  t.notOk(await store.hasJob(old), 'the first round a minute after start');
  const next = await put(2, 2);
  clock.advance(3600_000 - 1);
  await retention.idle();
  t.ok(await store.hasJob(next), 'the next round an interval after the first');
  clock.advance(1);
  await retention.idle();
  t.notOk(await store.hasJob(next));
  await retention.stop();
  const later = await put(3, 2);
  clock.advance(10 * 3600_000);
  await retention.idle();
  t.ok(await store.hasJob(later), 'no round after stop');
});
