import type { Job } from '../../jobs/job.js';
import { isTerminal, JOB_STATUSES, type JobStatus } from '../../jobs/states.js';
import type { JobQuery, ProcessRecord, Store, StoreNotice } from '../store.js';
import type { Pool, PoolClient } from './pool.js';

/** Held by the daemon that uses a database (see `PgStore.open`). */
const SINGLE_DAEMON_LOCK = 0x736b6c65;

const ACTIVE_STATUSES = JOB_STATUSES.filter((status) => !isTerminal(status));

/**
 * Job records and process records in PostgreSQL. A job's row keeps the record as its clients see
 * it (`doc`, stored as written) and the fields the daemon filters and orders by beside it, written
 * in the same statement. Process records belong to the host that started them.
 */
export class PgStore implements Store {
  readonly notices: readonly StoreNotice[] = [];
  readonly #pool: Pool;
  readonly #hostId: string;
  #holder: PoolClient | null = null;

  constructor(pool: Pool, hostId: string) {
    this.#pool = pool;
    this.#hostId = hostId;
  }

  /**
   * The store of the one daemon that uses this database: until daemons share work through it,
   * two daemons on one database would each settle the other's jobs at start. The second one
   * stops at start instead. The lock is a connection's: it goes when the daemon does.
   */
  static async open(pool: Pool, hostId: string): Promise<PgStore> {
    const store = new PgStore(pool, hostId);
    const holder = await pool.connect();
    const { rows } = await holder.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [SINGLE_DAEMON_LOCK]).catch((error: unknown) => {
      holder.release(true);
      throw error;
    });
    if (rows[0]?.ok !== true) {
      holder.release(true);
      throw new Error('another skilld uses this database; each daemon needs a database of its own for now');
    }
    store.#holder = holder;
    return store;
  }

  async getJob(jobId: string): Promise<Job | undefined> {
    const { rows } = await this.#pool.query<{ doc: Job }>('SELECT doc FROM skilld.jobs WHERE job_id = $1', [jobId]);
    return rows[0]?.doc;
  }

  async hasJob(jobId: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query('SELECT 1 FROM skilld.jobs WHERE job_id = $1', [jobId]);
    return rowCount === 1;
  }

  /** Newest first; one row more than the page tells whether there is a next one. */
  async listJobs(query: JobQuery): Promise<{ jobs: Job[]; next: string | null }> {
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown): string => `$${values.push(value)}`;
    if (query.status !== undefined) where.push(`status = ${param(query.status)}`);
    if (query.skill_id !== undefined) where.push(`skill_id = ${param(query.skill_id)}`);
    if (query.id_prefix !== undefined) where.push(`starts_with(job_id, ${param(query.id_prefix)})`);
    if (query.before !== undefined) where.push(`(created_at, job_id) < (SELECT created_at, job_id FROM skilld.jobs WHERE job_id = ${param(query.before)})`);
    const sql = `SELECT doc FROM skilld.jobs ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY created_at DESC, job_id DESC LIMIT ${param(query.limit + 1)}`;
    const { rows } = await this.#pool.query<{ doc: Job }>(sql, values);
    const jobs = rows.slice(0, query.limit).map((row) => row.doc);
    return { jobs, next: rows.length > query.limit ? (jobs[jobs.length - 1]?.job_id ?? null) : null };
  }

  async activeJobs(): Promise<Job[]> {
    const { rows } = await this.#pool.query<{ doc: Job }>('SELECT doc FROM skilld.jobs WHERE status = ANY($1) ORDER BY created_at, job_id', [ACTIVE_STATUSES]);
    return rows.map((row) => row.doc);
  }

  async countByStatus(): Promise<Record<JobStatus, number>> {
    const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    const { rows } = await this.#pool.query<{ status: JobStatus; n: number }>('SELECT status, count(*)::integer AS n FROM skilld.jobs GROUP BY status');
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  async putJob(job: Job): Promise<void> {
    await this.#pool.query(
      `INSERT INTO skilld.jobs (job_id, status, skill_id, created_at, doc) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (job_id) DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc`,
      jobRow(job),
    );
  }

  async processes(): Promise<ProcessRecord[]> {
    const { rows } = await this.#pool.query<ProcessRecord>('SELECT job_id, pid, pgid, start_time FROM skilld.processes WHERE host_id = $1 ORDER BY pid', [this.#hostId]);
    return rows;
  }

  async putProcess(record: ProcessRecord): Promise<void> {
    await this.#pool.query(
      `INSERT INTO skilld.processes (host_id, pid, job_id, pgid, start_time) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (host_id, pid) DO UPDATE SET job_id = EXCLUDED.job_id, pgid = EXCLUDED.pgid, start_time = EXCLUDED.start_time`,
      [this.#hostId, record.pid, record.job_id, record.pgid, record.start_time],
    );
  }

  async removeProcess(pid: number): Promise<void> {
    await this.#pool.query('DELETE FROM skilld.processes WHERE host_id = $1 AND pid = $2', [this.#hostId, pid]);
  }

  async close(): Promise<void> {
    this.#holder?.release(true);
    this.#holder = null;
    await this.#pool.end();
  }
}

/** The values of a job's row, in the order of the INSERT's columns; `doc` as text, so it is stored exactly as written. */
export function jobRow(job: Job): unknown[] {
  return [job.job_id, job.status, job.skill_id, job.created_at, JSON.stringify(job)];
}
