// The PostgreSQL store against a real throwaway server: the schema and its versions, the same
// job semantics as the files store, documents stored all or nothing, a skill snapshot written out
// per host, and events numbered without gaps by whichever daemon writes them.
import t, { type Test } from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../daemon/base/clock.js';
import type { Job } from '../../daemon/model/job.js';
import { RunFolder } from '../../daemon/model/run-folder.js';
import { createLogger } from '../../daemon/base/logger.js';
import { LowdbStore } from '../../daemon/store/lowdb-store.js';
import { migrate, SCHEMA_VERSION, SchemaVersionError } from '../../daemon/store/pg/migrations.js';
import type { JobDocs } from '../../daemon/store/job-docs.js';
import { PgDocs } from '../../daemon/store/pg/pg-docs.js';
import { PgEvents } from '../../daemon/store/pg/pg-events.js';
import { jobRow, PgStore } from '../../daemon/store/pg/pg-store.js';
import { HostLease } from '../../daemon/cluster/host-lease.js';
import { openPool, type Pool } from '../../daemon/store/pg/pool.js';
import type { ExpiryQuery, Store } from '../../daemon/store/store.js';
import { asStorageError } from '../../daemon/store/storage-fault.js';
import { testPostgres } from '../helpers/daemon.js';
import { makeJob } from '../helpers/jobs.js';
import { losingPool } from '../helpers/losing-pool.js';
import type { ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';
import { storedEvents } from '../helpers/job-events.js';
import { cursorAfter, type JobEventRecord } from '../../daemon/model/events.js';

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;
const postgres = started as ThrowawayPostgres;
if (typeof started !== 'string') t.teardown(() => postgres.stop());

const logger = createLogger('silent');
const clock: Clock = { now: () => new Date(), setTimer: (ms, callback) => {
  const handle = setTimeout(callback, ms);
  return { cancel: () => clearTimeout(handle) };
} };

/** A migrated database of its own, and a pool on it that the test closes. */
async function database(t: Test): Promise<{ url: string; pool: Pool }> {
  const url = await postgres.createDatabase('store');
  const pool = poolOn(t, url);
  await migrate(pool, 'test');
  return { url, pool };
}

function poolOn(t: Test, url: string): Pool {
  const pool = openPool(url, logger);
  t.teardown(() => (pool.ended ? undefined : pool.end()));
  return pool;
}

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-pg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A store for a host that joined the database, which also inserts the jobs it is given as held by
 * that host (the daemon inserts through `JobDocs.create`, and holds a job once it claims it).
 */
async function hostStore(pool: Pool, hostId: string): Promise<PgStore> {
  const lease = new HostLease(pool, hostId, 15_000);
  await lease.join(`token-${hostId}`, ['codex'], { version: 'test', pid: 1, max_concurrent: 1 });
  class SeedingStore extends PgStore {
    override async putJob(job: Job): Promise<void> {
      await pool.query(
        `INSERT INTO skilld.jobs (job_id, status, skill_id, created_at, engine, doc, owner_host, owner_epoch) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [...jobRow(job), hostId, lease.epoch],
      );
      await super.putJob(job);
    }
  }
  return new SeedingStore(pool, lease, () => undefined);
}

/** The next COMMIT loses its connection after the server committed, or before it got it. */
const COMMIT_KEPT = { sql: /^COMMIT$/, sent: true };
const COMMIT_LOST = { sql: /^COMMIT$/, sent: false };

t.test('migrations: applied once, by one of several daemons starting together; a newer schema is refused', { skip }, async (t) => {
  const url = await postgres.createDatabase('migrate');
  const pools = [poolOn(t, url), poolOn(t, url), poolOn(t, url)];
  const applied = await Promise.all(pools.map((pool) => migrate(pool, 'test')));
  t.same(applied.flat().sort(), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1), 'each version applied exactly once');
  t.same(await migrate(pools[0] as Pool, 'test'), [], 'nothing left to apply');
  const { rows } = await (pools[0] as Pool).query<{ daemon_version: string }>('SELECT daemon_version FROM skilld.schema_migrations');
  t.same(rows.map((r) => r.daemon_version), Array(SCHEMA_VERSION).fill('test'), 'each step names the daemon that applied it');
  await (pools[0] as Pool).query("INSERT INTO skilld.schema_migrations (version, name, daemon_version) VALUES ($1, 'from the future', '9.9.9')", [SCHEMA_VERSION + 1]);
  await t.rejects(migrate(pools[1] as Pool, 'test'), SchemaVersionError, 'a daemon older than the schema refuses it');
});

t.test('migration 5: the finished jobs of a database at version 4 get their finish time, also one whose record holds an escaped NUL', { skip }, async (t) => {
  const url = await postgres.createDatabase('upgrade');
  const pool = poolOn(t, url);
  t.same(await migrate(pool, 'old', 4), [1, 2, 3, 4]);
  const jobs = [
    makeJob(1, { status: 'succeeded', finished_at: '2025-02-01T00:00:00.000Z' }),
    makeJob(2, { status: 'failed', finished_at: '2025-02-02T00:00:00.000Z', error: { code: 'ENGINE_EXIT_NONZERO', message: 'said \u0000 then died' } }),
    makeJob(3, { status: 'running' }),
  ];
  for (const job of jobs) await pool.query('INSERT INTO skilld.jobs (job_id, status, skill_id, created_at, engine, doc) VALUES ($1, $2, $3, $4, $5, $6)', jobRow(job));
  t.same(await migrate(pool, 'new'), [5]);
  const { rows } = await pool.query<{ job_id: string; finished_at: string | null }>('SELECT job_id, finished_at FROM skilld.jobs ORDER BY job_id');
  t.same(rows, [
    { job_id: 'job-0001', finished_at: '2025-02-01T00:00:00.000Z' },
    { job_id: 'job-0002', finished_at: '2025-02-02T00:00:00.000Z' },
    { job_id: 'job-0003', finished_at: null },
  ]);
});

// The semantics the supervisor and the API rely on, checked on both stores with the same steps.
const STORES: Array<[string, (t: Test) => Promise<Store>]> = [
  ['files', async (t) => {
    const store = await LowdbStore.open(await tempDir(t), () => new Date());
    t.teardown(() => store.close());
    return store;
  }],
  ['postgres', async (t) => hostStore((await database(t)).pool, 'host-a')],
];

for (const [name, open] of STORES) {
  t.test(`${name}: jobs read back, listed newest first in pages, filtered, counted; processes kept`, { skip: name === 'postgres' ? skip : false }, async (t) => {
    const store = await open(t);
    t.equal(await store.getJob('job-0001'), undefined);
    t.equal(await store.hasJob('job-0001'), false);
    const jobs = [makeJob(1, { status: 'succeeded' }), makeJob(2, { skill_id: 'other', status: 'running' }), makeJob(3, { status: 'waiting_user' }), makeJob(4, { skill_id: 'other' }), makeJob(5, { status: 'failed', error: { code: 'OUTPUT_INVALID', message: 'bad' } })];
    for (const job of jobs) await store.putJob(job);
    t.same(await store.getJob('job-0003'), jobs[2]);
    t.equal(await store.hasJob('job-0003'), true);
    const ids = (list: { jobs: Job[] }): string[] => list.jobs.map((j) => j.job_id);
    const page1 = await store.listJobs({ limit: 2 });
    t.same([ids(page1), page1.next], [['job-0005', 'job-0004'], 'job-0004']);
    const page2 = await store.listJobs({ limit: 2, before: 'job-0004' });
    t.same([ids(page2), page2.next], [['job-0003', 'job-0002'], 'job-0002']);
    t.same((await store.listJobs({ limit: 5 })).next, null, 'an exactly full page has no next');
    t.same(ids(await store.listJobs({ limit: 10, skill_id: 'other' })), ['job-0004', 'job-0002']);
    t.same(ids(await store.listJobs({ limit: 10, status: 'failed' })), ['job-0005']);
    t.same(ids(await store.listJobs({ limit: 10, id_prefix: 'job-000' })), ['job-0005', 'job-0004', 'job-0003', 'job-0002', 'job-0001']);
    t.same(ids(await store.listJobs({ limit: 10, id_prefix: 'job-0003' })), ['job-0003']);
    t.same(ids(await store.listJobs({ limit: 10, id_prefix: 'job-1' })), []);
    t.same((await store.activeJobs()).map((j) => j.job_id), ['job-0002', 'job-0003', 'job-0004'], 'active jobs, oldest first');
    t.same(await store.countByStatus(), { queued: 1, running: 1, waiting_user: 1, succeeded: 1, failed: 1, canceled: 0 });
    await store.putJob({ ...(jobs[1] as Job), status: 'canceled', finished_at: '2025-01-02T00:00:00.000Z' });
    t.same(await store.countByStatus(), { queued: 1, running: 0, waiting_user: 1, succeeded: 1, failed: 1, canceled: 1 }, 'a move counts once');
    t.equal((await store.getJob('job-0002'))?.status, 'canceled');
    await store.putProcess({ job_id: 'job-0003', pid: 4242, pgid: 4242, start_time: '123' });
    await store.putProcess({ job_id: 'job-0004', pid: 4343, pgid: 4343, start_time: '456' });
    await store.removeProcess(4343);
    await store.removeProcess(9999);
    t.same(await store.processes(), [{ job_id: 'job-0003', pid: 4242, pgid: 4242, start_time: '123' }]);
  });
}

for (const [name, open] of STORES) {
  t.test(`${name}: retention selects finished jobs by age and by count, earliest finished first; only finished jobs are removed, wholly`, { skip: name === 'postgres' ? skip : false }, async (t) => {
    const store = await open(t);
    const at = (s: number): string => new Date(Date.UTC(2025, 0, 2, 0, 0, s)).toISOString();
    const finished = (n: number, status: Job['status'], s: number): Job => makeJob(n, { status, finished_at: at(s), ...(status === 'failed' ? { error: { code: 'OUTPUT_INVALID', message: 'bad' } } : {}) });
    for (const job of [finished(1, 'succeeded', 1), finished(2, 'failed', 2), makeJob(3, { status: 'running' }), finished(4, 'canceled', 4), finished(5, 'succeeded', 5), makeJob(6, { status: 'waiting_user' })]) await store.putJob(job);
    const expired = async (query: Omit<ExpiryQuery, 'limit'>, limit = 10): Promise<string[]> => (await store.expiredJobs({ ...query, limit })).map((j) => j.job_id);
    t.same(await expired({ finished_before: at(4) }), ['job-0001', 'job-0002'], 'finished before a time');
    t.same(await expired({ keep_newest: 1 }), ['job-0001', 'job-0002', 'job-0004'], 'beyond the newest finished');
    t.same(await expired({ keep_newest: 3 }), ['job-0001']);
    t.same(await expired({ keep_newest: 3, finished_before: at(3) }), ['job-0001', 'job-0002'], 'either condition selects');
    t.same(await expired({ keep_newest: 10 }), [], 'none beyond');
    t.same(await expired({ keep_newest: 0, statuses: ['succeeded'] }), ['job-0001', 'job-0005'], 'among the statuses asked for');
    t.same(await expired({ keep_newest: 0 }, 2), ['job-0001', 'job-0002'], 'a page');
    t.same(await expired({ keep_newest: 0 }), ['job-0001', 'job-0002', 'job-0004', 'job-0005'], 'never an active job');
    t.match(await store.expiredJobs({ finished_before: at(2), limit: 1 }), [{ job_id: 'job-0001', status: 'succeeded', skill_id: 'echo-auto', finished_at: at(1) }]);

    t.same(await store.removeJobs(['job-0001', 'job-0003', 'job-0006', 'job-9999']), ['job-0001'], 'a running or waiting job, or none, is left');
    t.equal(await store.getJob('job-0001'), undefined);
    t.equal(await store.hasJob('job-0001'), false);
    t.same((await store.listJobs({ limit: 10 })).jobs.map((j) => j.job_id), ['job-0006', 'job-0005', 'job-0004', 'job-0003', 'job-0002']);
    t.same((await store.listJobs({ limit: 10, id_prefix: 'job-000' })).jobs.length, 5, 'nor found by its prefix');
    t.same(await store.countByStatus(), { queued: 0, running: 1, waiting_user: 1, succeeded: 1, failed: 1, canceled: 1 });
    t.same([...(await store.existingJobs(['job-0001', 'job-0002', 'job-0003']))].sort(), ['job-0002', 'job-0003']);
    t.same(await expired({ keep_newest: 0 }), ['job-0002', 'job-0004', 'job-0005']);
    t.same(await store.removeJobs(['job-0001']), [], 'removed once');
  });
}

t.test('postgres: key order of a stored job is kept; process records belong to their host', { skip }, async (t) => {
  const { pool } = await database(t);
  const a = await hostStore(pool, 'host-a');
  const b = await hostStore(pool, 'host-b');
  const job = makeJob(1);
  await a.putJob(job);
  t.same(Object.keys((await b.getJob(job.job_id)) as Job), Object.keys(job), 'the record reads back as written, for every daemon');
  await a.putProcess({ job_id: job.job_id, pid: 10, pgid: 10, start_time: '1' });
  await b.putProcess({ job_id: job.job_id, pid: 10, pgid: 10, start_time: '2' });
  t.same((await a.processes()).map((p) => p.start_time), ['1']);
  t.same((await b.processes()).map((p) => p.start_time), ['2'], 'the same pid on another host is another process');
});

t.test('postgres documents: a job is stored with its request and skill, or not at all; rounds, pending and result read back', { skip }, async (t) => {
  const { pool } = await database(t);
  const runs = await tempDir(t);
  const docs: JobDocs = new PgDocs(pool, runs);
  const store = await hostStore(pool, 'host-a');
  const job = makeJob(1, { execution_mode: 'interactive' });
  const skillFiles = new Map([['SKILL.md', Buffer.from('# Echo\nSay it back.\n')], ['assets/runner.json', Buffer.from('{"id":"echo-auto"}')], ['assets/bin.dat', Buffer.from([0, 255, 1])]]);
  await docs.create(job, { request: { input: { text: 'hi' }, parameter: {}, model: null }, skillFiles });
  t.same(await store.getJob(job.job_id), job);
  t.same(await docs.request(job.job_id), { input: { text: 'hi' }, parameter: {}, model: null });
  await t.rejects(docs.create(job, { request: { input: {}, parameter: {}, model: null }, skillFiles }), { code: '23505' }, 'the same id twice is refused');
  const broken = makeJob(2);
  await t.rejects(docs.create(broken, { request: { input: {}, parameter: {}, model: null }, skillFiles: new Map([['SKILL.md', 'not bytes' as unknown as Buffer], ['x', null as unknown as Buffer]]) }));
  t.equal(await store.hasJob(broken.job_id), false, 'a create that failed half-way left no job');

  t.same(await docs.history(job.job_id), []);
  const round = { interaction_id: 1, prompt: 'Which?', kind: 'open_text', response: null, resolution_mode: null, asked_at: 'x', replied_at: null, idempotency_key: null };
  await docs.putHistory(job.job_id, [round], false);
  t.same(await docs.history(job.job_id), [round]);
  t.equal(await docs.pending(job.job_id), null);
  await docs.putPending(job.job_id, { interaction_id: 1, kind: 'open_text', prompt: 'Which?' } as never);
  t.match(await docs.pending(job.job_id), { interaction_id: 1, prompt: 'Which?' });
  await docs.putResult({ job_id: job.job_id, status: 'succeeded', output: { ok: true }, warnings: [], error: null });
  t.same(await docs.result(job.job_id), { job_id: job.job_id, status: 'succeeded', output: { ok: true }, warnings: [], error: null });
  await t.rejects(docs.putResult({ job_id: 'job-9999', status: 'failed', output: null, warnings: [], error: null }), /no documents/, 'a job that does not exist takes no result');

  await docs.prepare(job);
  const folder = new RunFolder(runs, job.job_id);
  const skillDir = folder.skillDir;
  t.match(await readFile(folder.skillMd, 'utf8'), new RegExp(`^# Echo\\nSay it back\\.\\n[\\s\\S]*${folder.artifactsDir.replace(/[/.]/g, '\\$&')}`), 'SKILL.md written out, pointing at this host\'s artifacts folder');
  t.same([...(await readFile(join(skillDir, 'assets', 'bin.dat')))], [0, 255, 1], 'other files byte for byte');
  await writeFile(join(skillDir, 'assets', 'bin.dat'), 'kept');
  await docs.prepare(job);
  t.equal(await readFile(join(skillDir, 'assets', 'bin.dat'), 'utf8'), 'kept', 'a second prepare finds it in place');
});

t.test('postgres documents: a create whose connection broke during its commit is read back: kept, not kept, or said to be in doubt', { skip }, async (t) => {
  const { pool } = await database(t);
  const runs = await tempDir(t);
  const store = await hostStore(pool, 'host-a');
  const request = { input: {}, parameter: {}, model: null };
  const skillFiles = new Map([['SKILL.md', Buffer.from('# Echo\n')]]);
  const breaking = losingPool(pool);
  const docs = new PgDocs(breaking.pool, runs);

  const kept = makeJob(1);
  breaking.lose = COMMIT_KEPT;
  await docs.create(kept, { request, skillFiles });
  t.ok(await store.hasJob(kept.job_id), 'committed before the connection broke: read back, the create stands');

  breaking.lose = COMMIT_LOST;
  const notKept = makeJob(2);
  const refused = await docs.create(notKept, { request, skillFiles }).then(() => null, (error: unknown) => error);
  t.match(asStorageError(refused, 'the new job'), { code: 'STORAGE_UNAVAILABLE', message: /nothing of this request was kept/ }, 'not committed: read back, nothing was kept');
  t.equal(await store.hasJob(notKept.job_id), false);

  breaking.lose = COMMIT_KEPT;
  breaking.reads = false;
  const doubt = makeJob(3);
  const inDoubt = await docs.create(doubt, { request, skillFiles }).then(() => null, (error: unknown) => error);
  t.match(inDoubt, { code: 'STORAGE_UNAVAILABLE', details: { job_id: doubt.job_id, in_doubt: true }, message: /may have been stored: jobs\/get/ }, 'cannot be read back: said to be in doubt, with the id to ask about');
  breaking.reads = true;
  t.ok(await store.hasJob(doubt.job_id), 'it had been kept');
});

t.test('postgres events: a batch whose commit lost its connection is read back: stored once and heard once, whether it was kept or not', { skip }, async (t) => {
  const { pool } = await database(t);
  const store = await hostStore(pool, 'host-a');
  const job = makeJob(1);
  await store.putJob(job);
  const breaking = losingPool(pool);
  const events = new PgEvents(breaking.pool, clock);
  const heard: number[] = [];
  events.listen((event) => heard.push(event.seq));
  const heardAll = async (count: number): Promise<void> => {
    for (let i = 0; i < 500 && heard.length < count; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  breaking.lose = COMMIT_KEPT;
  for (let i = 0; i < 3; i += 1) events.emit(job.job_id, 'output', { i });
  await heardAll(3);
  breaking.lose = COMMIT_LOST;
  for (let i = 3; i < 5; i += 1) events.emit(job.job_id, 'output', { i });
  await heardAll(5);
  breaking.lose = COMMIT_KEPT;
  breaking.reads = false;
  events.emit(job.job_id, 'output', { i: 5 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  breaking.reads = true;
  await heardAll(6);
  await events.close(job.job_id);
  const replay = await storedEvents(events, job.job_id, 0);
  t.same(replay.map((e) => (e.data as { i: number }).i), [0, 1, 2, 3, 4, 5], 'each event stored once, in order');
  t.same(replay.map((e) => e.seq), [1, 2, 3, 4, 5, 6], 'no gap, no repeat');
  t.same(heard, [1, 2, 3, 4, 5, 6], 'each heard once');
});

t.test('postgres events: the announcement of a batch this host stored, heard before its commit returns or after the job\'s last event, adds nothing and skips nothing', { skip }, async (t) => {
  const { pool } = await database(t);
  await (await hostStore(pool, 'host-a')).putJob(makeJob(1));
  let events: PgEvents | null = null;
  let early = true;
  // The batch's NOTIFY reaches the listening connection as the server commits, and may be read
  // before the COMMIT's own answer: handed over at that moment, while `early`.
  const announcing = new Proxy(pool, {
    get(target, key) {
      // The pool's own methods run on the pool itself: its query checks a client out of it, not of this proxy.
      if (key !== 'connect') {
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async () => {
        const client = await target.connect();
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        (client as unknown as { query: unknown }).query = async (...args: unknown[]) => {
          const answer = await query(...args);
          if (args[0] === 'COMMIT' && early) events?.heard('job-0001:3');
          return answer;
        };
        return client;
      };
    },
  });
  events = new PgEvents(announcing, clock);
  events.follow(() => true);
  const heard: number[] = [];
  let reached = (): void => undefined;
  events.listen((event) => {
    heard.push(event.seq);
    if (event.type === 'finished' || event.seq === 3) reached();
  });
  const until = (): Promise<void> => new Promise((resolve) => (reached = resolve));
  const first = until();
  for (const line of ['one', 'two', 'three']) events.emit('job-0001', 'output', { line });
  await first;
  t.same(heard, [1, 2, 3], 'announced before its commit returned: every event of the batch heard once, in order');
  early = false;
  const last = until();
  events.emit('job-0001', 'finished', { status: 'succeeded' });
  await last;
  events.heard('job-0001:4');
  await events.closeAll();
  await storedEvents(events, 'job-0001');
  t.same(heard, [1, 2, 3, 4], 'announced after the job\'s last event was heard: not heard again');
});

t.test('postgres events: another host hears a job\'s events once, however its announcements and the job\'s end fall', { skip }, async (t) => {
  const { pool, url } = await database(t);
  await (await hostStore(pool, 'host-a')).putJob(makeJob(1));
  const a = new PgEvents(pool, clock);
  const b = new PgEvents(poolOn(t, url), clock);
  b.follow(() => true);
  const heard: number[] = [];
  let reached = (): void => undefined;
  b.listen((event) => {
    heard.push(event.seq);
    if (event.type === 'finished') reached();
  });
  a.emit('job-0001', 'output', { line: 'one' });
  a.emit('job-0001', 'output', { line: 'two' });
  await a.close('job-0001');
  a.emit('job-0001', 'finished', { status: 'succeeded' });
  await a.closeAll();
  // The first announcement B hears (of the batch that ends at 2) comes once the whole job is
  // stored: B follows the job from that batch's last event, and its fetch reads to the end.
  const ended = new Promise<void>((resolve) => (reached = resolve));
  b.heard('job-0001:2');
  await ended;
  b.heard('job-0001:3');
  b.catchUp();
  await storedEvents(b, 'job-0001');
  t.same(heard, [2, 3], 'the later announcement, and a catch-up, repeat nothing');
});

t.test('postgres events: numbered per job without gaps across daemons, heard once stored, replayed in order', { skip }, async (t) => {
  const { pool, url } = await database(t);
  const other = poolOn(t, url);
  const store = await hostStore(pool, 'host-a');
  const job = makeJob(1);
  await store.putJob(job);
  const a = new PgEvents(pool, clock);
  const b = new PgEvents(other, clock);
  const heard: JobEventRecord[] = [];
  a.listen((event) => heard.push(event));
  b.listen((event) => heard.push(event));
  for (let i = 0; i < 30; i += 1) (i % 2 === 0 ? a : b).emit(job.job_id, 'output', { i });
  await Promise.all([a.close(job.job_id), b.close(job.job_id)]);
  const replay = await storedEvents(a, job.job_id, 0);
  t.same(replay.map((e) => e.seq), Array.from({ length: 30 }, (_, i) => i + 1), 'one sequence, no gap, no repeat');
  t.same(heard.map((e) => e.seq).sort((x, y) => x - y), replay.map((e) => e.seq), 'every event heard once, after it was stored');
  t.same((await storedEvents(b, job.job_id, 28)).map((e) => e.data), replay.slice(28).map((e) => e.data));
  t.same(replay.filter((e) => e.job_id === job.job_id).length, 30);
  a.emit('job-9999', 'output', {});
  await a.close('job-9999');
  t.same(await storedEvents(a, 'job-9999', 0), [], 'a job that is not stored takes no events');
});

t.test('postgres events: read a page at a time, each holding about maxBytes (at least one event), the last one saying so', { skip }, async (t) => {
  const { pool } = await database(t);
  await (await hostStore(pool, 'host-a')).putJob(makeJob(1));
  const events = new PgEvents(pool, clock);
  for (let i = 1; i <= 40; i += 1) events.emit('job-0001', 'output', { i, text: 'x'.repeat(i === 10 ? 4000 : 100) });
  await events.close('job-0001');
  const sizes: number[] = [];
  const ends: number[] = [];
  let cursor = cursorAfter(0);
  const seen: number[] = [];
  for (let end = false; !end; ) {
    const page = await events.read('job-0001', cursor, 500);
    sizes.push(page.events.length);
    seen.push(...page.events.map((e) => e.seq));
    ends.push(page.cursor.seq);
    t.equal(page.cursor.seq, seen[seen.length - 1] ?? 0, 'the cursor stands after the page');
    ({ cursor, end } = page);
  }
  t.same(seen, Array.from({ length: 40 }, (_, i) => i + 1), 'every event once, in order');
  t.ok(sizes.every((n) => n <= 5), `pages of at most 5 events of ~110 bytes for 500 (${sizes.join(', ')})`);
  t.ok(ends.includes(10), 'a page ends with the large event: past maxBytes it takes no more');
  t.same(await events.read('job-0001', cursor, 500), { events: [], cursor, end: true }, 'nothing after the end');
});

t.test('postgres events: emitted while the database is down, stored once it is back', { skip }, async (t) => {
  const { pool } = await database(t);
  await (await hostStore(pool, 'host-a')).putJob(makeJob(1));
  const events = new PgEvents(pool, clock);
  const heard: number[] = [];
  events.listen((event) => heard.push(event.seq));
  events.emit('job-0001', 'status_changed', { from: null, to: 'queued' });
  await storedEvents(events, 'job-0001', 0);
  await postgres.crash();
  events.emit('job-0001', 'output', { line: 'while down' });
  await postgres.restart();
  const stored = new Promise<void>((resolve) => events.listen((event) => (event.seq === 2 ? resolve() : undefined)));
  await stored;
  t.same((await storedEvents(events, 'job-0001', 0)).map((e) => [e.seq, e.type]), [[1, 'status_changed'], [2, 'output']]);
  t.same(heard, [1, 2]);
  await events.closeAll();
});
