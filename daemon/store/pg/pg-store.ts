import type { Job } from '../../model/job.js';
import { isTerminal, JOB_STATUSES, type JobStatus } from '../../model/states.js';
import type { ExpiredJob, ExpiryQuery, JobQuery, ProcessRecord, Store, StoreNotice } from '../store.js';
import { SkilldError } from '../../../rpc/errors.js';
import { fence, type HostEpoch } from './host-fence.js';
import type { Pool } from './pool.js';

const ACTIVE_STATUSES = JOB_STATUSES.filter((status) => !isTerminal(status));
const FINISHED_STATUSES = JOB_STATUSES.filter(isTerminal);

/**
 * Job records and process records in PostgreSQL. A job's row keeps the record as its clients see
 * it (`doc`, stored as written) and the fields the daemons filter and order by beside it, written
 * in the same statement. Process records belong to the host that started them, and so do the
 * active jobs a daemon recovers at start: those it holds (cluster/custody.ts). A change to a job
 * counts only while this host holds it in its current epoch; one refused means the other hosts
 * took this one for gone, and `onFenced` stops the daemon.
 */
export class PgStore implements Store {
  readonly notices: readonly StoreNotice[] = [];
  readonly #pool: Pool;
  readonly #lease: HostEpoch;
  readonly #onFenced: () => void;

  constructor(pool: Pool, lease: HostEpoch, onFenced: () => void) {
    this.#pool = pool;
    this.#lease = lease;
    this.#onFenced = onFenced;
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
    // Seen by its owner, or by one it is shared with (model/access.ts `seenBy`).
    if (query.visible_to !== undefined) where.push(`(doc->'owner'->>'user' = ${param(query.visible_to.user)} OR EXISTS (SELECT 1 FROM json_array_elements_text(doc->'share_with') AS shared WHERE shared = ANY(${param([...query.visible_to.entries])})))`);
    if (query.before !== undefined) where.push(`(created_at, job_id) < (SELECT created_at, job_id FROM skilld.jobs WHERE job_id = ${param(query.before)})`);
    const sql = `SELECT doc FROM skilld.jobs ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY created_at DESC, job_id DESC LIMIT ${param(query.limit + 1)}`;
    const { rows } = await this.#pool.query<{ doc: Job }>(sql, values);
    const jobs = rows.slice(0, query.limit).map((row) => row.doc);
    return { jobs, next: rows.length > query.limit ? (jobs[jobs.length - 1]?.job_id ?? null) : null };
  }

  /** This host's: the ones it holds, but not those it took from a gone host only to fail them (cluster/member.ts settles those). */
  async activeJobs(): Promise<Job[]> {
    const { rows } = await this.#pool.query<{ doc: Job }>(
      'SELECT doc FROM skilld.jobs WHERE status = ANY($1) AND owner_host = $2 AND taken_from IS NULL ORDER BY created_at, job_id',
      [ACTIVE_STATUSES, this.#lease.hostId],
    );
    return rows.map((row) => row.doc);
  }

  async countByStatus(): Promise<Record<JobStatus, number>> {
    const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    const { rows } = await this.#pool.query<{ status: JobStatus; n: number }>('SELECT status, count(*)::integer AS n FROM skilld.jobs GROUP BY status');
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  async putJob(job: Job): Promise<void> {
    const { rowCount } = await this.#pool.query(
      `UPDATE skilld.jobs SET status = $2, doc = $3, finished_at = $6 WHERE job_id = $1 AND owner_host = $4 AND owner_epoch = $5 AND ${fence('$4', '$5')}`,
      [job.job_id, job.status, JSON.stringify(job), this.#lease.hostId, this.#lease.epoch, isTerminal(job.status) ? job.finished_at : null],
    );
    if (rowCount === 1) return;
    this.#onFenced();
    throw new SkilldError('STORAGE_UNAVAILABLE', `host "${this.#lease.hostId}" no longer holds job ${job.job_id}: the other hosts took it for gone, and this daemon stops`);
  }

  /**
   * Both conditions select a prefix of the jobs in the order they finished: the oldest
   * `count - keep_newest`, and those finished before the time. So one ordered scan of the
   * `jobs_finished` index answers, and stops at the first job neither selects.
   */
  async expiredJobs(query: ExpiryQuery): Promise<ExpiredJob[]> {
    const statuses = query.statuses ?? FINISHED_STATUSES;
    let beyond = 0;
    if (query.keep_newest !== undefined) {
      const { rows } = await this.#pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM skilld.jobs WHERE finished_at IS NOT NULL AND status = ANY($1)', [statuses]);
      beyond = Math.max(0, (rows[0]?.n ?? 0) - query.keep_newest);
    }
    const before = query.finished_before ?? null;
    if (beyond === 0 && before === null) return [];
    const { rows } = await this.#pool.query<ExpiredJob>(
      `SELECT job_id, status, skill_id, finished_at FROM skilld.jobs
       WHERE finished_at IS NOT NULL AND status = ANY($1) AND (finished_at < $2 OR $3 > 0)
       ORDER BY finished_at, job_id LIMIT $4`,
      [statuses, before ?? '', beyond, query.limit],
    );
    const expired: ExpiredJob[] = [];
    for (const [i, row] of rows.entries()) {
      if (i >= beyond && (before === null || row.finished_at === null || row.finished_at >= before)) break;
      expired.push(row);
    }
    return expired;
  }

  /** One statement: the rows of the jobs' documents, files and events go with them (ON DELETE CASCADE). */
  async removeJobs(jobIds: readonly string[]): Promise<string[]> {
    if (jobIds.length === 0) return [];
    const { rows } = await this.#pool.query<{ job_id: string }>('DELETE FROM skilld.jobs WHERE job_id = ANY($1) AND status = ANY($2) RETURNING job_id', [jobIds, FINISHED_STATUSES]);
    return rows.map((row) => row.job_id);
  }

  async existingJobs(jobIds: readonly string[]): Promise<Set<string>> {
    if (jobIds.length === 0) return new Set();
    const { rows } = await this.#pool.query<{ job_id: string }>('SELECT job_id FROM skilld.jobs WHERE job_id = ANY($1)', [jobIds]);
    return new Set(rows.map((row) => row.job_id));
  }

  async holders(jobIds: readonly string[]): Promise<Map<string, string>> {
    if (jobIds.length === 0) return new Map();
    const { rows } = await this.#pool.query<{ job_id: string; owner_host: string }>('SELECT job_id, owner_host FROM skilld.jobs WHERE job_id = ANY($1) AND owner_host IS NOT NULL', [jobIds]);
    return new Map(rows.map((row) => [row.job_id, row.owner_host]));
  }

  async processes(): Promise<ProcessRecord[]> {
    const { rows } = await this.#pool.query<ProcessRecord>('SELECT job_id, pid, pgid, start_time FROM skilld.processes WHERE host_id = $1 ORDER BY pid', [this.#lease.hostId]);
    return rows;
  }

  async putProcess(record: ProcessRecord): Promise<void> {
    await this.#pool.query(
      `INSERT INTO skilld.processes (host_id, pid, job_id, pgid, start_time) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (host_id, pid) DO UPDATE SET job_id = EXCLUDED.job_id, pgid = EXCLUDED.pgid, start_time = EXCLUDED.start_time`,
      [this.#lease.hostId, record.pid, record.job_id, record.pgid, record.start_time],
    );
  }

  async removeProcess(pid: number): Promise<void> {
    await this.#pool.query('DELETE FROM skilld.processes WHERE host_id = $1 AND pid = $2', [this.#lease.hostId, pid]);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

/** The values of a job's row, in the order of the INSERT's columns; `doc` as text, so it is stored exactly as written. */
export function jobRow(job: Job): unknown[] {
  return [job.job_id, job.status, job.skill_id, job.created_at, job.engine, JSON.stringify(job)];
}
