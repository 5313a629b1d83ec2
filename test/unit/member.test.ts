// A host's rounds (daemon/cluster/member.ts) on a real PostgreSQL, when a statement that took jobs
// lost its connection after the server ran it: what the database says the host holds is settled
// all the same — jobs taken from a gone host are failed once, and a claimed job nothing waits for
// is queued for a slot — and a job on its way to a slot is never queued twice.
import t, { type Test } from 'tap';
import { Custody } from '../../daemon/cluster/custody.js';
import { HostLease } from '../../daemon/cluster/host-lease.js';
import type { Mailbox } from '../../daemon/cluster/mailbox.js';
import { ClusterMember } from '../../daemon/cluster/member.js';
import { JobRouter } from '../../daemon/cluster/router.js';
import type { Job, JobError } from '../../daemon/model/job.js';
import { createLogger } from '../../daemon/base/logger.js';
import { SlotPool } from '../../daemon/slots/pool.js';
import { migrate } from '../../daemon/store/pg/migrations.js';
import { jobRow, PgStore } from '../../daemon/store/pg/pg-store.js';
import { openPool, type Pool } from '../../daemon/store/pg/pool.js';
import { testPostgres } from '../helpers/daemon.js';
import { stillClock } from '../helpers/fake-clock.js';
import { makeJob } from '../helpers/jobs.js';
import { losingPool, type LosingPool } from '../helpers/losing-pool.js';
import type { ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;
const postgres = started as ThrowawayPostgres;
if (typeof started !== 'string') t.teardown(() => postgres.stop());

const logger = createLogger('silent');

interface Round {
  member: ClusterMember;
  lease: HostLease;
  db: LosingPool;
  slots: SlotPool;
  adopted: string[];
  failed: [string, JobError][];
}

async function database(t: Test): Promise<Pool> {
  const pool = openPool(await postgres.createDatabase('member'), logger);
  t.teardown(() => pool.end());
  await migrate(pool, 'test');
  return pool;
}

async function join(pool: Pool, hostId: string, ttlMs: number): Promise<HostLease> {
  const lease = new HostLease(pool, hostId, ttlMs);
  await lease.join(`token-${hostId}`, ['codex'], { version: 'test', pid: 1, max_concurrent: 2 });
  return lease;
}

/**
 * Host B, which has renewed its lease for long enough to take others for gone. Its lease is short
 * (nobody takes B for gone here) so that a database that has just started lets it reap. Its
 * statements about jobs go through a pool that can lose a connection on demand.
 */
async function hostB(pool: Pool): Promise<Round> {
  const lease = await join(pool, 'host-b', 1);
  await pool.query(`UPDATE skilld.hosts SET renewing_since = now() - interval '1 hour' WHERE host_id = 'host-b'`);
  const db = losingPool(pool);
  const slots = new SlotPool(2);
  const round: Round = { lease, db, slots, adopted: [], failed: [], member: null as unknown as ClusterMember };
  round.member = new ClusterMember({
    lease, custody: new Custody(db.pool, lease), pool: slots, clock: stillClock, logger, engines: ['codex'], pinnedGraceSec: 0,
    jobs: {
      adopt: (jobId) => {
        round.adopted.push(jobId);
        slots.request(jobId, () => undefined);
      },
      failTakenOver: (jobId, error) => round.failed.push([jobId, error]),
    },
    onFenced: () => t.fail('B was taken for gone'),
  });
  return round;
}

async function insert(pool: Pool, job: Job, holder: HostLease | null): Promise<void> {
  await pool.query(
    'INSERT INTO skilld.jobs (job_id, status, skill_id, created_at, engine, doc, owner_host, owner_epoch) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
    [...jobRow(job), holder?.hostId ?? null, holder?.epoch ?? null],
  );
}

async function holders(pool: Pool): Promise<Record<string, string | null>> {
  const { rows } = await pool.query<{ job_id: string; owner_host: string | null }>('SELECT job_id, owner_host FROM skilld.jobs ORDER BY job_id');
  return Object.fromEntries(rows.map((row) => [row.job_id, row.owner_host]));
}

t.test('a gone host\'s jobs are failed as its restart would, though the statements that took them lost their answers', { skip }, async (t) => {
  const pool = await database(t);
  const a = await join(pool, 'host-a', 15_000);
  const interactive = { execution_mode: 'interactive' as const, pending_interaction_id: 1, attempt: 1 };
  await insert(pool, makeJob(1, { status: 'running', attempt: 1 }), a);
  await insert(pool, makeJob(2, { ...interactive, status: 'waiting_user', interactive_profile: { kind: 'sticky_process', reason: 'live' } }), a);
  await insert(pool, makeJob(3, { ...interactive, status: 'waiting_user', interactive_profile: { kind: 'resumable', reason: 'session' } }), a);
  await insert(pool, makeJob(4), a);
  await pool.query(`UPDATE skilld.hosts SET lease_until = now() - interval '1 hour' WHERE host_id = 'host-a'`);
  const b = await hostB(pool);

  b.db.lose = { sql: /^COMMIT$/, sent: true };
  await b.member.tick();
  t.same(b.failed, [], 'the reap\'s COMMIT lost its answer: nothing was settled in that round');
  t.same(await holders(pool), { 'job-0001': 'host-b', 'job-0002': 'host-b', 'job-0003': 'host-a', 'job-0004': 'host-b' }, 'yet the server kept it: B holds the running and sticky jobs; the queued one went back to the queue and B claimed it');
  t.same(b.adopted, ['job-0004'], 'the claimed job waits for a slot on B');

  b.db.lose = { sql: /WITH o AS/, sent: true };
  await b.member.tick();
  t.same(b.failed, [], 'the statement that took the job past its grace lost its answer too');
  t.equal((await holders(pool))['job-0003'], 'host-b', 'and was kept');

  await b.member.tick();
  t.match(Object.fromEntries(b.failed), {
    'job-0001': { code: 'DAEMON_RESTART_INTERRUPTED', message: /host "host-a" stopped renewing its lease while this turn ran there/ },
    'job-0002': { code: 'INTERACTION_PROCESS_LOST', message: /host "host-a"/ },
    'job-0003': { code: 'HOST_LOST', message: /host "host-a" holds this job's workspace/ },
  }, 'the next round fails each as A\'s restart would, from what the database says B took');
  t.equal(b.failed.length, 3);

  await b.member.tick();
  t.equal(b.failed.length, 3, 'a job being failed is handed over once');
  t.same(b.adopted, ['job-0004'], 'and the job B claimed is not queued twice');
  const custody = new Custody(pool, b.lease);
  t.equal(await custody.logsHost('job-0001'), 'host-a', 'the logs of a taken job are where it ran, on the gone host');
  t.equal(await custody.logsHost('job-0004'), 'host-b');
  t.equal(await custody.logsHost('job-9999'), null);
  t.same(await custody.holder('job-0002', true), { host: 'host-a', took: false, gone: true });
  t.same(await custody.holder('job-0004', false), { host: 'host-b', took: false, gone: false });
  const never = (): never => {
    throw new Error('carried out for a taken job');
  };
  const router = new JobRouter({ cancel: never, reply: never, adopt: never, get: never, runFolder: never }, { custody, mailbox: null as unknown as Mailbox }, 'host-b');
  for (const request of [router.reply({ job_id: 'job-0002', interaction_id: 1, response: 'late' }), router.cancel('job-0001')]) {
    const refused = await request.catch((error: unknown) => error);
    t.match(refused, { code: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-a', in_doubt: false }, message: /is gone; the job is being settled/ }, 'a reply or cancel for a taken job is refused, naming the gone host: nothing is carried out before the job fails');
  }
  const restarted = new PgStore(pool, b.lease, () => undefined);
  t.same((await restarted.activeJobs()).map((job) => job.job_id), ['job-0004'], 'B\'s restart would recover only the job it holds to run: the taken ones are left to its rounds');
});

t.test('a claim whose answer was lost: the job is queued for a slot at the second round that finds nothing here waiting for it', { skip }, async (t) => {
  const pool = await database(t);
  await insert(pool, makeJob(1), null);
  const b = await hostB(pool);

  b.db.lose = { sql: /WITH c AS/, sent: true };
  await b.member.tick();
  t.same(await holders(pool), { 'job-0001': 'host-b' }, 'the server ran the claim');
  t.same(b.adopted, [], 'but B never heard of it');

  await b.member.tick();
  t.same(b.adopted, [], 'one round that finds it unwaited-for may have met a claim on its way: not yet');
  await b.member.tick();
  t.same(b.adopted, ['job-0001'], 'the second one queues it for a slot');
  t.ok(b.slots.has('job-0001'));

  await insert(pool, makeJob(2), null);
  await b.member.tick();
  await b.member.tick();
  await b.member.tick();
  t.same(b.adopted, ['job-0001', 'job-0002'], 'a job claimed and queued at once is never queued again');
});
