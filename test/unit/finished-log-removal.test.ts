// Removing finished jobs from the files store (retention): a tombstone line makes the removal
// durable, a reopen keeps it, and once enough of the log is dead it is rewritten in the background
// with the live lines alone, while appends go on and are kept.
import t from 'tap';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../daemon/model/job.js';
import { REWRITE_MIN_DEAD_BYTES } from '../../daemon/store/finished-log.js';
import { LowdbStore } from '../../daemon/store/lowdb-store.js';
import { makeJob } from '../helpers/jobs.js';

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-removal-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const finished = (n: number, extra: Partial<Job> = {}): Job => makeJob(n, { status: 'succeeded', finished_at: new Date(Date.UTC(2025, 0, 3, 0, 0, 0, n)).toISOString(), ...extra });
const logPath = (dir: string): string => join(dir, 'jobs-finished.ndjson');
const storedIds = async (store: LowdbStore): Promise<string[]> => (await store.listJobs({ limit: 1000 })).jobs.map((j) => j.job_id).sort();

t.test('a removal is a tombstone line: durable, kept by a reopen, no notice', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, () => new Date());
  for (let n = 1; n <= 4; n += 1) await store.putJob(finished(n));
  t.same(await store.removeJobs(['job-0002', 'job-0003']), ['job-0002', 'job-0003']);
  const lines = (await readFile(logPath(dir), 'utf8')).trimEnd().split('\n');
  t.same(JSON.parse(lines[lines.length - 1] as string), { removed: ['job-0002', 'job-0003'] }, 'one line names the jobs removed');
  await store.close();
  const again = await LowdbStore.open(dir, () => new Date());
  t.teardown(() => again.close());
  t.same(await storedIds(again), ['job-0001', 'job-0004']);
  t.same(again.notices, [], 'a tombstone is no damage');
  t.same((await again.expiredJobs({ keep_newest: 0, limit: 10 })).map((j) => j.job_id), ['job-0001', 'job-0004']);
});

t.test('once the dead lines outweigh an eighth of the live ones, the log is rewritten with the live ones; appends made meanwhile are kept', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, () => new Date());
  // Large enough lines that removing most of them passes the threshold.
  const padding = 'x'.repeat(4096);
  const count = Math.ceil((2 * REWRITE_MIN_DEAD_BYTES) / padding.length);
  for (let n = 1; n <= count; n += 1) await store.putJob(finished(n, { error: null, warnings: [], skill_version: padding }));
  const before = (await stat(logPath(dir))).size;
  const doomed = Array.from({ length: count - 10 }, (_, i) => `job-${String(i + 1).padStart(4, '0')}`);
  await store.removeJobs(doomed);
  // The rewrite runs in the background now: these appends land during it or after.
  const late = Array.from({ length: 20 }, (_, i) => finished(count + 1 + i));
  await Promise.all(late.map((job) => store.putJob(job)));
  await store.removeJobs([late[0]?.job_id as string]);
  await store.close();
  const after = (await stat(logPath(dir))).size;
  t.ok(after < before / 4, `the log shrank (${before} -> ${after} bytes)`);
  t.same((await readdir(dir)).filter((name) => name.includes('rewrite')), [], 'no temp file left');
  const again = await LowdbStore.open(dir, () => new Date());
  t.teardown(() => again.close());
  const expected = [...Array.from({ length: 10 }, (_, i) => `job-${String(count - 9 + i).padStart(4, '0')}`), ...late.slice(1).map((job) => job.job_id)].sort();
  t.same(await storedIds(again), expected, 'the live jobs, those appended during the rewrite, none removed');
  t.same(again.notices, []);
  t.equal((await again.getJob(expected[0] as string))?.skill_version, padding, 'a kept job reads back whole');
});

t.test('lines an older daemon wrote (no finished_at in the head) load, are selected by age, and get the current layout when rewritten', async (t) => {
  const dir = await tempDir(t);
  const old = (n: number): string => {
    const { job_id, status, skill_id, created_at, ...rest } = finished(n);
    return JSON.stringify({ job_id, status, skill_id, created_at, ...rest });
  };
  await writeFile(logPath(dir), `${old(1)}\n${old(2)}\n`);
  const store = await LowdbStore.open(dir, () => new Date());
  t.same((await store.expiredJobs({ finished_before: '2025-01-03T00:00:00.002Z', limit: 10 })).map((j) => j.job_id), ['job-0001']);
  await store.removeJobs(['job-0001']);
  await store.close();
  const text = await readFile(logPath(dir), 'utf8');
  t.match(text, /"removed"/, 'not rewritten for so little');
  const again = await LowdbStore.open(dir, () => new Date());
  t.teardown(() => again.close());
  t.same(await storedIds(again), ['job-0002']);
});
