import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SkilldError } from '../../../rpc/errors.js';
import type { Pending } from '../../model/gate.js';
import type { Interaction } from '../../model/interactions.js';
import type { Job } from '../../model/job.js';
import { patchSkillMd } from '../../model/prompt.js';
import { RunFolder } from '../../model/run-folder.js';
import type { JobDocs, JobResult, NewJobDocs, StoredRequest } from '../job-docs.js';
import { jobRow } from './pg-store.js';
import { CommitInDoubtError, inTransaction, type Pool } from './pool.js';

/** The channel a new or released queued job is announced on: every host's claimer listens (cluster/member.ts). */
export const QUEUED_CHANNEL = 'skilld_queued';

/**
 * Job documents in PostgreSQL, readable by every daemon of the store. The skill snapshot is kept
 * as it was (SKILL.md unpatched) and written out into the run folder of whichever host runs the
 * job, its SKILL.md pointing at that host's artifacts folder.
 */
export class PgDocs implements JobDocs {
  readonly #pool: Pool;
  readonly #runsDir: string;

  constructor(pool: Pool, runsDir: string) {
    this.#pool = pool;
    this.#runsDir = runsDir;
  }

  /**
   * The record, the request and the skill's files in one transaction: the job exists with all of
   * them or not at all. When the connection broke during the commit, the job is read back: kept,
   * the create stands; not kept, it failed; unreadable, the error says the job may exist.
   */
  async create(job: Job, docs: NewJobDocs): Promise<void> {
    const paths = [...docs.skillFiles.keys()];
    try {
      await inTransaction(this.#pool, async (client) => {
        await client.query('INSERT INTO skilld.jobs (job_id, status, skill_id, created_at, engine, doc) VALUES ($1, $2, $3, $4, $5, $6)', jobRow(job));
        await client.query('INSERT INTO skilld.job_docs (job_id, request) VALUES ($1, $2)', [job.job_id, JSON.stringify(docs.request)]);
        await client.query('INSERT INTO skilld.job_files (job_id, path, bytes) SELECT $1, * FROM unnest($2::text[], $3::bytea[])', [job.job_id, paths, paths.map((path) => docs.skillFiles.get(path))]);
        // Every host's claimer hears of it once it is stored.
        await client.query(`SELECT pg_notify('${QUEUED_CHANNEL}', '')`);
      });
    } catch (error) {
      if (!(error instanceof CommitInDoubtError)) throw error;
      const kept = await this.#pool.query('SELECT 1 FROM skilld.jobs WHERE job_id = $1', [job.job_id]).then((result) => result.rowCount === 1, () => null);
      if (kept === true) return;
      if (kept === false) throw error;
      const message = `could not write the new job: the database connection broke while it was committed, and it cannot be read back now; the job may have been stored: jobs/get ${job.job_id} tells once the database is back`;
      throw new SkilldError('STORAGE_UNAVAILABLE', message, { cause: error, details: { job_id: job.job_id, in_doubt: true } });
    }
  }

  async request(jobId: string): Promise<StoredRequest> {
    return (await this.#doc<StoredRequest>(jobId, 'request')) as StoredRequest;
  }

  /** Written out once per host (a restart finds it in place); the skill folder appears whole, by a rename. */
  async prepare(job: Job): Promise<void> {
    const folder = new RunFolder(this.#runsDir, job.job_id);
    await mkdir(folder.artifactsDir, { recursive: true, mode: 0o700 });
    if ((await stat(folder.skillMd).catch(() => null)) !== null) return;
    const { rows } = await this.#pool.query<{ path: string; bytes: Buffer }>('SELECT path, bytes FROM skilld.job_files WHERE job_id = $1', [job.job_id]);
    const staging = `${folder.skillDir}.new`;
    await rm(staging, { recursive: true, force: true });
    for (const { path, bytes } of rows) {
      const target = join(staging, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, path === 'SKILL.md' ? patchSkillMd(bytes.toString('utf8'), job.execution_mode, folder.artifactsDir) : bytes);
    }
    await rm(folder.skillDir, { recursive: true, force: true });
    await rename(staging, folder.skillDir);
  }

  async history(jobId: string): Promise<Interaction[]> {
    return (await this.#doc<Interaction[]>(jobId, 'history')) ?? [];
  }

  async putHistory(jobId: string, history: readonly Interaction[]): Promise<void> {
    await this.#put(jobId, 'history', history);
  }

  pending(jobId: string): Promise<Pending | null> {
    return this.#doc<Pending>(jobId, 'pending');
  }

  putPending(jobId: string, pending: Pending): Promise<void> {
    return this.#put(jobId, 'pending', pending);
  }

  result(jobId: string): Promise<JobResult | null> {
    return this.#doc<JobResult>(jobId, 'result');
  }

  putResult(result: JobResult): Promise<void> {
    return this.#put(result.job_id, 'result', result);
  }

  async #doc<T>(jobId: string, column: 'request' | 'history' | 'pending' | 'result'): Promise<T | null> {
    const { rows } = await this.#pool.query<Record<string, T | null>>(`SELECT ${column} FROM skilld.job_docs WHERE job_id = $1`, [jobId]);
    return rows[0]?.[column] ?? null;
  }

  async #put(jobId: string, column: 'history' | 'pending' | 'result', value: unknown): Promise<void> {
    const { rowCount } = await this.#pool.query(`UPDATE skilld.job_docs SET ${column} = $2 WHERE job_id = $1`, [jobId, JSON.stringify(value)]);
    if (rowCount !== 1) throw new Error(`job ${jobId} has no documents to update`);
  }
}
