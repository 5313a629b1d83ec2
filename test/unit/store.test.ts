import t from 'tap';
import { appendFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../daemon/model/job.js';
import { LowdbStore, SCHEMA_VERSION, StateVersionError, COMPACT_MIN_BYTES } from '../../daemon/store/lowdb-store.js';

const NOW = new Date('2025-06-01T12:00:00.000Z');
const now = (): Date => NOW;

/** A job created `n` seconds after a fixed origin, so creation order is the order of `n`. */
function makeJob(n: number, overrides: Partial<Job> = {}): Job {
  const created = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
  const status = overrides.status ?? 'queued';
  const terminal = status === 'succeeded' || status === 'failed' || status === 'canceled';
  return {
    job_id: `job-${String(n).padStart(4, '0')}`,
    skill_id: 'echo-auto',
    skill_version: '1.0.0',
    engine: 'codex',
    execution_mode: 'auto',
    status,
    interactive_require_user_reply: true,
    session_timeout_sec: 1200,
    hard_timeout_sec: 3600,
    model: null,
    interactive_profile: null,
    attempt: 0,
    max_attempt: null,
    pending_interaction_id: null,
    wait_deadline_at: null,
    session_handle: null,
    warnings: [],
    error: status === 'failed' ? { code: 'OUTPUT_INVALID', message: 'bad output' } : null,
    created_at: created,
    updated_at: created,
    started_at: null,
    finished_at: terminal ? created : null,
    ...overrides,
  };
}

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The hot state as a restart would load it from disk: the state.json snapshot, then the
 * state.wal journal replayed over it, minus jobs the finished log holds.
 */
async function readState(dir: string): Promise<{ schema_version: number; jobs: Record<string, Job> }> {
  const snapshot = await readFile(join(dir, 'state.json'), 'utf8').catch(() => '{"schema_version":1,"jobs":{}}');
  const state = JSON.parse(snapshot) as { schema_version: number; jobs: Record<string, Job> };
  const journal = await readFile(join(dir, 'state.wal'), 'utf8').catch(() => '');
  for (const line of journal.split('\n')) {
    const entry = line === '' ? null : (JSON.parse(line) as { job?: Job });
    if (entry?.job !== undefined) state.jobs[entry.job.job_id] = entry.job;
  }
  const finished = await readFile(join(dir, 'jobs-finished.ndjson'), 'utf8').catch(() => '');
  for (const line of finished.split('\n')) if (line !== '') delete state.jobs[(JSON.parse(line) as Job).job_id];
  return state;
}

/** Bytes of the hot state on disk: snapshot and journal. */
async function hotStateBytes(dir: string): Promise<number> {
  const sizes = await Promise.all(['state.json', 'state.wal'].map((f) => stat(join(dir, f)).then((s) => s.size, () => 0)));
  return sizes.reduce((a, b) => a + b, 0);
}

async function readFinished(dir: string): Promise<Job[]> {
  const text = await readFile(join(dir, 'jobs-finished.ndjson'), 'utf8');
  // Every append must leave the log on a clean line, or the next one would be glued to it.
  if (text !== '' && !text.endsWith('\n')) throw new Error(`the finished log does not end with a newline: ${JSON.stringify(text.slice(-40))}`);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Job);
}

const ids = (jobs: Job[]): string[] => jobs.map((j) => j.job_id);

t.test('put and get; the store keeps its own copy', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  t.equal(await store.getJob('job-0001'), undefined);
  const job = makeJob(1);
  await store.putJob(job);
  t.same(await store.getJob('job-0001'), job);
  job.status = 'running';
  t.equal((await store.getJob('job-0001'))?.status, 'queued', 'mutating the caller object does not change the store');
  t.same(store.notices, []);
});

t.test('list: newest first, before cursor, next only when more remain', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  for (const n of [1, 2, 3, 4, 5]) await store.putJob(makeJob(n));
  // Updating a job does not move it in the list.
  await store.putJob(makeJob(2, { status: 'running' }));
  const page1 = await store.listJobs({ limit: 2 });
  t.same(ids(page1.jobs), ['job-0005', 'job-0004']);
  t.equal(page1.next, 'job-0004');
  const page2 = await store.listJobs({ limit: 2, before: 'job-0004' });
  t.same(ids(page2.jobs), ['job-0003', 'job-0002']);
  t.equal(page2.next, 'job-0002');
  const page3 = await store.listJobs({ limit: 2, before: 'job-0002' });
  t.same(ids(page3.jobs), ['job-0001']);
  t.equal(page3.next, null);
  t.same(ids((await store.listJobs({ limit: 5 })).jobs), ['job-0005', 'job-0004', 'job-0003', 'job-0002', 'job-0001']);
  t.equal((await store.listJobs({ limit: 5 })).next, null, 'an exactly full page has no next');
  t.same(ids((await store.listJobs({ limit: 10, before: 'job-0001' })).jobs), [], 'nothing before the oldest');
});

t.test('list: status and skill_id filters, paged', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  await store.putJob(makeJob(1, { status: 'succeeded' }));
  await store.putJob(makeJob(2, { status: 'running', skill_id: 'other' }));
  await store.putJob(makeJob(3, { status: 'succeeded', skill_id: 'other' }));
  await store.putJob(makeJob(4, { status: 'queued' }));
  await store.putJob(makeJob(5, { status: 'succeeded' }));
  t.same(ids((await store.listJobs({ limit: 10, status: 'succeeded' })).jobs), ['job-0005', 'job-0003', 'job-0001']);
  t.same(ids((await store.listJobs({ limit: 10, skill_id: 'other' })).jobs), ['job-0003', 'job-0002']);
  t.same(ids((await store.listJobs({ limit: 10, skill_id: 'other', status: 'succeeded' })).jobs), ['job-0003']);
  t.same(ids((await store.listJobs({ limit: 10, status: 'failed' })).jobs), []);
  const first = await store.listJobs({ limit: 1, status: 'succeeded' });
  t.same(ids(first.jobs), ['job-0005']);
  t.equal(first.next, 'job-0005');
  const second = await store.listJobs({ limit: 1, status: 'succeeded', before: 'job-0005' });
  t.same(ids(second.jobs), ['job-0003']);
  const third = await store.listJobs({ limit: 1, status: 'succeeded', before: 'job-0003' });
  t.same(ids(third.jobs), ['job-0001']);
  t.equal(third.next, null, 'no later matching job: no next');
});

t.test('counts by status follow status changes', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  t.same(await store.countByStatus(), { queued: 0, running: 0, waiting_user: 0, succeeded: 0, failed: 0, canceled: 0 });
  await store.putJob(makeJob(1));
  await store.putJob(makeJob(2));
  await store.putJob(makeJob(3, { status: 'waiting_user' }));
  await store.putJob(makeJob(1, { status: 'running' }));
  await store.putJob(makeJob(2, { status: 'failed' }));
  t.same(await store.countByStatus(), { queued: 0, running: 1, waiting_user: 1, succeeded: 0, failed: 1, canceled: 0 });
});

t.test('activeJobs: only non-terminal jobs, oldest first', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  await store.putJob(makeJob(3, { status: 'running' }));
  await store.putJob(makeJob(1, { status: 'waiting_user' }));
  await store.putJob(makeJob(2, { status: 'canceled' }));
  t.same(ids(await store.activeJobs()), ['job-0001', 'job-0003']);
});

t.test('a terminal job moves to jobs-finished.ndjson and out of state.json', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  await store.putJob(makeJob(1, { status: 'running' }));
  await store.putJob(makeJob(2, { status: 'queued' }));
  let state = await readState(dir);
  t.equal(state.schema_version, SCHEMA_VERSION);
  t.same(Object.keys(state.jobs).sort(), ['job-0001', 'job-0002']);
  t.equal(state.jobs['job-0001']?.status, 'running');

  const done = makeJob(1, { status: 'succeeded', finished_at: '2025-01-01T00:10:00.000Z' });
  await store.putJob(done);
  state = await readState(dir);
  t.same(Object.keys(state.jobs), ['job-0002'], 'the finished job left the hot file');
  t.same(await readFinished(dir), [done], 'the finished log holds exactly the finished job');
  t.same(await store.getJob('job-0001'), done, 'still readable from the store');
});

t.test('reopen restores active and finished jobs, order and counts', async (t) => {
  const dir = await tempDir(t);
  const first = await LowdbStore.open(dir, now);
  const jobs = [makeJob(1, { status: 'succeeded' }), makeJob(2, { status: 'waiting_user', attempt: 2 }), makeJob(3, { status: 'failed' }), makeJob(4)];
  for (const job of jobs) await first.putJob(job);
  await first.close();

  const second = await LowdbStore.open(dir, now);
  t.teardown(() => second.close());
  for (const job of jobs) t.same(await second.getJob(job.job_id), job, `${job.job_id} restored`);
  t.same(ids((await second.listJobs({ limit: 10 })).jobs), ['job-0004', 'job-0003', 'job-0002', 'job-0001']);
  t.same(ids(await second.activeJobs()), ['job-0002', 'job-0004']);
  t.same(await second.countByStatus(), { queued: 1, running: 0, waiting_user: 1, succeeded: 1, failed: 1, canceled: 0 });
  t.same(second.notices, []);
  // Writes after a reopen keep going to the same files.
  await second.putJob(makeJob(4, { status: 'canceled' }));
  t.same(ids(await readFinished(dir)), ['job-0001', 'job-0003', 'job-0004']);
  t.same(Object.keys((await readState(dir)).jobs), ['job-0002']);
});

t.test('a job present in both files resolves to the finished one', async (t) => {
  const dir = await tempDir(t);
  const running = makeJob(1, { status: 'running' });
  const finished = makeJob(1, { status: 'succeeded', finished_at: '2025-01-01T00:05:00.000Z' });
  const other = makeJob(2, { status: 'queued' });
  await writeFile(join(dir, 'state.json'), JSON.stringify({ schema_version: SCHEMA_VERSION, jobs: { 'job-0001': running, 'job-0002': other } }));
  await writeFile(join(dir, 'jobs-finished.ndjson'), `${JSON.stringify(finished)}\n`);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  t.same(await store.getJob('job-0001'), finished);
  t.same(ids(await store.activeJobs()), ['job-0002'], 'the finished job is not active');
  t.same(await store.countByStatus(), { queued: 1, running: 0, waiting_user: 0, succeeded: 1, failed: 0, canceled: 0 });
  t.same(ids((await store.listJobs({ limit: 10 })).jobs), ['job-0002', 'job-0001'], 'listed once');
  await store.putJob(makeJob(2, { status: 'running' }));
  t.same(Object.keys((await readState(dir)).jobs), ['job-0002'], 'the next write drops the stale copy from the hot file');
});

t.test('a corrupt state.json is moved aside with a STATE_FILE_CORRUPT notice, never replaced silently', async (t) => {
  const dir = await tempDir(t);
  const corrupt = '{"schema_version": 1, "jobs": {"job-0001": {"job_id": "job-0001", "status": "runn';
  await writeFile(join(dir, 'state.json'), corrupt);
  await writeFile(join(dir, 'jobs-finished.ndjson'), `${JSON.stringify(makeJob(7, { status: 'succeeded' }))}\n`);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());

  const aside = join(dir, `state.json.corrupt-${NOW.toISOString().replace(/[:.]/g, '-')}`);
  t.same(store.notices.map((n) => ({ code: n.code, path: n.path })), [{ code: 'STATE_FILE_CORRUPT', path: aside }]);
  t.match(store.notices[0]?.message ?? '', /kept aside/);
  t.equal(await readFile(aside, 'utf8'), corrupt, 'the original bytes are in the aside file');
  t.equal(await stat(join(dir, 'state.json')).catch(() => null), null, 'state.json is not silently rewritten on open');
  t.same(await store.activeJobs(), [], 'no active jobs were guessed from the broken file');
  t.equal((await store.getJob('job-0007'))?.status, 'succeeded', 'finished jobs are still loaded');

  await store.putJob(makeJob(8));
  t.same(Object.keys((await readState(dir)).jobs), ['job-0008'], 'a fresh state.json on the next write');
  t.equal(await readFile(aside, 'utf8'), corrupt, 'the aside file is kept after later writes');
  t.same((await readdir(dir)).filter((f) => f.startsWith('state.json.corrupt-')).length, 1);
});

t.test('a state.json that is JSON but not a state object is treated as corrupt', async (t) => {
  for (const content of ['[]', 'null', '"text"', '{"schema_version": 1}', '']) {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'state.json'), content);
    const store = await LowdbStore.open(dir, now);
    t.same(store.notices.map((n) => n.code), ['STATE_FILE_CORRUPT'], JSON.stringify(content));
    await store.close();
  }
});

t.test('an unknown schema_version makes open() reject with StateVersionError and leaves the file', async (t) => {
  const dir = await tempDir(t);
  const content = JSON.stringify({ schema_version: 99, jobs: {} });
  await writeFile(join(dir, 'state.json'), content);
  await t.rejects(LowdbStore.open(dir, now), StateVersionError);
  await t.rejects(LowdbStore.open(dir, now), /schema_version 99/);
  t.equal(await readFile(join(dir, 'state.json'), 'utf8'), content, 'the file is not touched');
  t.same((await readdir(dir)).filter((f) => f.includes('corrupt')), [], 'not moved aside either');
});

t.test(
  'a state.json of another schema_version with a different shape is refused, not moved aside as corrupt',
  async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'state.json'), JSON.stringify({ schema_version: 2, active: [] }));
    await t.rejects(LowdbStore.open(dir, now), StateVersionError);
  },
);

t.test(
  'a state.json whose jobs is null is treated as corrupt instead of crashing open()',
  async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, 'state.json'), JSON.stringify({ schema_version: SCHEMA_VERSION, jobs: null }));
    const store = await LowdbStore.open(dir, now);
    t.same(store.notices.map((n) => n.code), ['STATE_FILE_CORRUPT']);
    await store.close();
  },
);

t.test('a torn last line in the finished log is cut off with a notice; later appends are readable', async (t) => {
  const dir = await tempDir(t);
  const a = makeJob(1, { status: 'succeeded' });
  const b = makeJob(2, { status: 'failed' });
  const torn = JSON.stringify(makeJob(3, { status: 'succeeded' })).slice(0, 40);
  await writeFile(join(dir, 'jobs-finished.ndjson'), `${JSON.stringify(a)}\n${JSON.stringify(b)}\n${torn}`);
  const store = await LowdbStore.open(dir, now);
  t.same(store.notices.map((n) => n.code), ['FINISHED_LOG_TRUNCATED']);
  t.match(store.notices[0]?.message ?? '', /torn last line/);
  t.same(ids((await store.listJobs({ limit: 10 })).jobs), ['job-0002', 'job-0001']);
  t.equal(await store.getJob('job-0003'), undefined);
  t.equal(await readFile(join(dir, 'jobs-finished.ndjson'), 'utf8'), `${JSON.stringify(a)}\n${JSON.stringify(b)}\n`, 'the torn bytes are gone');

  const c = makeJob(4, { status: 'canceled' });
  await store.putJob(c);
  await store.close();
  t.same(await readFinished(dir), [a, b, c], 'the append starts on a clean line');

  const reopened = await LowdbStore.open(dir, now);
  t.teardown(() => reopened.close());
  t.same(reopened.notices, [], 'no notice once the log is clean');
  t.same(ids((await reopened.listJobs({ limit: 10 })).jobs), ['job-0004', 'job-0002', 'job-0001']);
});

t.test('a complete last line without its newline is kept and terminated', async (t) => {
  const dir = await tempDir(t);
  const a = makeJob(1, { status: 'succeeded' });
  await writeFile(join(dir, 'jobs-finished.ndjson'), JSON.stringify(a));
  const store = await LowdbStore.open(dir, now);
  t.same(store.notices, []);
  t.same(await store.getJob('job-0001'), a);
  const b = makeJob(2, { status: 'succeeded' });
  await store.putJob(b);
  await store.close();
  t.same(await readFinished(dir), [a, b]);
});

t.test('an unreadable line in the middle of the finished log is skipped with a notice', async (t) => {
  const dir = await tempDir(t);
  const a = makeJob(1, { status: 'succeeded' });
  const b = makeJob(2, { status: 'succeeded' });
  await writeFile(join(dir, 'jobs-finished.ndjson'), `${JSON.stringify(a)}\n{garbage\n${JSON.stringify(b)}\n`);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  t.same(store.notices.map((n) => n.code), ['FINISHED_LOG_TRUNCATED']);
  t.same(ids((await store.listJobs({ limit: 10 })).jobs), ['job-0002', 'job-0001']);
});

t.test('finished jobs are stored index fields first and read back whole; other layouts still load', async (t) => {
  const dir = await tempDir(t);
  const first = await LowdbStore.open(dir, now);
  // Escapes in the header fields must survive the header fast path.
  const quoted = makeJob(1, { status: 'failed', skill_id: 'odd-"skill"\\x' });
  const plain = makeJob(2, { status: 'succeeded' });
  await first.putJob(quoted);
  await first.putJob(plain);
  await first.close();
  const lines = (await readFile(join(dir, 'jobs-finished.ndjson'), 'utf8')).split('\n').filter((l) => l !== '');
  for (const line of lines) t.same(Object.keys(JSON.parse(line) as object).slice(0, 4), ['job_id', 'status', 'skill_id', 'created_at'], 'index fields lead the line');
  // A line in another key order (written by hand, or an older layout) appended after them.
  const reordered = makeJob(3, { status: 'canceled', skill_id: 'other' });
  const { job_id: _id, ...rest } = reordered;
  await appendFile(join(dir, 'jobs-finished.ndjson'), `${JSON.stringify({ ...rest, job_id: reordered.job_id })}\n`);

  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  t.same(store.notices, []);
  t.same(await store.getJob('job-0001'), quoted, 'escaped skill_id read back exactly');
  t.same(await store.getJob('job-0003'), reordered);
  t.same(ids((await store.listJobs({ limit: 10, skill_id: quoted.skill_id })).jobs), ['job-0001'], 'filtered on the header field');
  t.same(ids((await store.listJobs({ limit: 10, status: 'canceled' })).jobs), ['job-0003']);
  t.same(await store.countByStatus(), { queued: 0, running: 0, waiting_user: 0, succeeded: 1, failed: 1, canceled: 1 });
  const a = await store.getJob('job-0002');
  const b = await store.getJob('job-0002');
  t.not(a, b, 'each read of a finished job is a fresh object: a caller cannot change what is stored');
});

t.test('a finished line that is not a terminal job is skipped with a notice; a damaged body is reported when read', async (t) => {
  const dir = await tempDir(t);
  const good = makeJob(1, { status: 'succeeded' });
  const notTerminal = makeJob(2, { status: 'running' });
  const damaged = makeJob(3, { status: 'succeeded' });
  const layout = (job: Job): string => {
    const { job_id, status, skill_id, created_at, finished_at, ...rest } = job;
    return JSON.stringify({ job_id, status, skill_id, created_at, finished_at, ...rest });
  };
  const broken = layout(damaged).replace('"engine":"codex"', '"engine":codex');
  await writeFile(join(dir, 'jobs-finished.ndjson'), `${layout(good)}\n${layout(notTerminal)}\n${JSON.stringify({ job_id: 'job-x' })}\n${broken}\n`);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  t.same(store.notices.map((n) => n.message), ['unreadable line 2 skipped', 'unreadable line 3 skipped']);
  t.same(await store.getJob('job-0001'), good);
  t.equal(await store.getJob('job-0002'), undefined);
  await t.rejects(store.getJob('job-0003'), { name: 'FinishedLineError', message: 'the stored record of finished job job-0003 is unreadable' }, 'the damage is an error, never a wrong job');
});

t.test('the state file does not grow with the number of finished jobs', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());
  await store.putJob(makeJob(0, { status: 'running' }));
  const sizeWithOneActive = await hotStateBytes(dir);
  await Promise.all(Array.from({ length: 500 }, (_, i) => store.putJob(makeJob(i + 1, { status: 'succeeded' }))));
  const size = await hotStateBytes(dir);
  t.equal(size, sizeWithOneActive, 'the hot state on disk is exactly as big as with one active job');
  t.ok(size < 2048, `the hot state stays small (${size} bytes)`);
  t.same(Object.keys((await readState(dir)).jobs), ['job-0000']);
  t.equal((await readFinished(dir)).length, 500, 'all 500 are in the finished log');
  t.equal((await store.countByStatus()).succeeded, 500);
  t.equal((await store.listJobs({ limit: 1000 })).jobs.length, 501);
});

t.test('each change is one journal line; the journal is folded into the snapshot once it grows', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  await store.putJob(makeJob(1, { status: 'running' }));
  t.equal((await readFile(join(dir, 'state.wal'), 'utf8')).split('\n').filter((l) => l !== '').length, 1, 'one line for one change');
  for (let i = 0; i < 1500; i += 1) await store.putJob(makeJob(1, { status: i % 2 === 0 ? 'waiting_user' : 'running', attempt: i }));
  const journalBytes = (await stat(join(dir, 'state.wal'))).size;
  t.ok(journalBytes <= COMPACT_MIN_BYTES + 4096, `the journal was compacted (${journalBytes} bytes)`);
  t.equal((await readState(dir)).jobs['job-0001']?.attempt, 1499, 'snapshot plus journal hold the latest state');
  await store.close();
  const again = await LowdbStore.open(dir, now);
  t.teardown(() => again.close());
  t.equal((await again.getJob('job-0001'))?.attempt, 1499);
});

t.test('a torn last journal line (a crash mid-append) is cut off and reported; earlier lines count', async (t) => {
  const dir = await tempDir(t);
  const store = await LowdbStore.open(dir, now);
  await store.putJob(makeJob(1, { status: 'running' }));
  await store.putJob(makeJob(2, { status: 'queued' }));
  // Simulate a crash: no close (which would compact), and half a line at the end.
  await appendFile(join(dir, 'state.wal'), '{"job":{"job_id":"job-0003","sta');
  const again = await LowdbStore.open(dir, now);
  t.teardown(() => again.close());
  t.same(again.notices.map((n) => n.code), ['STATE_JOURNAL_DAMAGED']);
  t.same((await again.activeJobs()).map((j) => j.job_id), ['job-0001', 'job-0002']);
});

t.test('state.json with a null job, a job of status "bogus" and a broken process record: start-up goes on, the damaged records are kept aside and reported, no status is invented', async (t) => {
  const dir = await tempDir(t);
  const good = makeJob(1, { status: 'running' });
  const bogus = { ...makeJob(2), status: 'bogus' };
  const processes = { '4242': { job_id: 'job-0001', pid: 4242, pgid: 4242, start_time: '77' }, '5': null };
  await writeFile(join(dir, 'state.json'), JSON.stringify({ schema_version: SCHEMA_VERSION, jobs: { 'job-0001': good, 'job-0009': null, 'job-0002': bogus, 'job-0003': makeJob(4) }, processes }));
  await writeFile(join(dir, 'state.wal'), `${JSON.stringify({ job: { ...makeJob(5), engine: 'nope' } })}\n${JSON.stringify({ job: makeJob(6) })}\n{"process_removed":"x"}\n[1]\n`);
  const store = await LowdbStore.open(dir, now);
  t.teardown(() => store.close());

  t.same((await store.activeJobs()).map((j) => j.job_id), ['job-0001', 'job-0006'], 'only records that check out are loaded');
  t.equal(await store.getJob('job-0002'), undefined, 'a job with an unknown status is not loaded under a guessed one');
  t.same(await store.processes(), [processes['4242']]);
  const aside = join(dir, `state.damaged-${NOW.toISOString().replace(/[:.]/g, '-')}.ndjson`);
  t.same(store.notices.map((n) => ({ code: n.code, path: n.path })), [{ code: 'STATE_RECORD_DAMAGED', path: aside }]);
  t.match(store.notices[0]?.message, /^7 stored record\(s\) could not be loaded \(first, in state\.json: job is not an object\)/);
  const kept = (await readFile(aside, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { from: string; key?: string; problem: string; record: unknown });
  t.same(
    kept.map((k) => [k.from, k.key ?? null, k.problem]),
    [
      ['state.json', 'job-0009', 'job is not an object'],
      ['state.json', 'job-0002', 'job status is not a job status'],
      ['state.json', 'job-0003', 'job_id job-0004 is stored under job-0003'],
      ['state.json', 'processes.5', 'process record is not an object'],
      ['state.wal', null, 'job engine is not a known engine'],
      ['state.wal', null, 'process_removed is not a pid'],
      ['state.wal', null, 'is not a journal entry'],
    ],
  );
  t.same(kept[1]?.record, bogus, 'kept byte for byte as parsed');

  const again = await LowdbStore.open(dir, now);
  t.teardown(() => again.close());
  t.same(again.notices, [], 'the hot state was rewritten without them: the next start finds nothing to report');
  t.same((await again.activeJobs()).map((j) => j.job_id), ['job-0001', 'job-0006']);
});
