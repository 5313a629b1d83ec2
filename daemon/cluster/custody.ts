import type { Job } from '../model/job.js';
import { fence } from '../store/pg/host-fence.js';
import { QUEUED_CHANNEL } from '../store/pg/pg-docs.js';
import { inTransaction, type Pool } from '../store/pg/pool.js';
import type { HostLease } from './host-lease.js';

/** SQL: the job waits in a live process (its reply goes to that process). */
const STICKY = `coalesce(doc->'interactive_profile'->>'kind' = 'sticky_process', false)`;

/** A host taken for gone, and what became of its jobs. */
export interface ReapedHost {
  host_id: string;
  /** Jobs in a turn or in a sticky wait, now held by this host to be failed (see `takenOver`): their processes were on the gone host. */
  taken: number;
  /** Queued jobs that had not started, given back to the queue. */
  released: number;
}

/** A job this host took from a gone host, to fail it as that host's restart would. */
export interface TakenJob {
  job_id: string;
  status: Job['status'];
  sticky: boolean;
  /** The gone host. */
  taken_from: string;
}

/**
 * Which host holds which job, in the shared store. Every non-finished job has at most one holder:
 * queued jobs nobody holds yet are claimed by a host with a free slot and the engine; a job keeps
 * its holder from its first turn to its end, since its workspace and engine session are on that
 * host. Every change of holder is one compare-and-set, so two hosts never hold a job at once.
 * A job taken from a gone host is marked with it (`taken_from`) in the statement that takes it,
 * so that it is failed even when that statement's answer was lost with the connection.
 */
export class Custody {
  readonly #pool: Pool;
  readonly #lease: HostLease;

  constructor(pool: Pool, lease: HostLease) {
    this.#pool = pool;
    this.#lease = lease;
  }

  /**
   * Claims up to `count` queued jobs nobody holds, oldest first, whose engine this host has (or
   * that no live host has: the job fails here with the engine's error rather than wait forever).
   * SKIP LOCKED: hosts claiming together take different jobs.
   */
  async claim(count: number, engines: readonly string[]): Promise<string[]> {
    if (count <= 0) return [];
    const { rows } = await this.#pool.query<{ job_id: string }>(
      `WITH c AS (
         SELECT job_id FROM skilld.jobs j
         WHERE status = 'queued' AND owner_host IS NULL
           AND (engine = ANY($3) OR NOT EXISTS (SELECT 1 FROM skilld.hosts h WHERE h.state = 'live' AND h.lease_until > now() AND j.engine = ANY(h.engines)))
         ORDER BY created_at, job_id LIMIT $4 FOR UPDATE SKIP LOCKED)
       UPDATE skilld.jobs j SET owner_host = $1, owner_epoch = $2 FROM c
       WHERE j.job_id = c.job_id AND ${fence('$1', '$2')}
       RETURNING j.job_id`,
      [this.#lease.hostId, this.#lease.epoch, engines, count],
    );
    return rows.map((row) => row.job_id).sort();
  }

  async unclaimed(): Promise<number> {
    const { rows } = await this.#pool.query<{ n: number }>(`SELECT count(*)::integer AS n FROM skilld.jobs WHERE status = 'queued' AND owner_host IS NULL`);
    return rows[0]?.n ?? 0;
  }

  /**
   * The host that holds an active job, after making this host its holder if nobody did (`take`:
   * a queued job about to be canceled here). Null for a finished or unknown job; `took` tells
   * whether this call made this host the holder. A job taken from a gone host to be failed is
   * `gone`, with `host` the gone host: no request for it can be carried out any more.
   */
  async holder(jobId: string, take: boolean): Promise<{ host: string | null; took: boolean; gone: boolean }> {
    if (take) {
      const { rowCount } = await this.#pool.query(
        `UPDATE skilld.jobs SET owner_host = $2, owner_epoch = $3
         WHERE job_id = $1 AND owner_host IS NULL AND status IN ('queued', 'running', 'waiting_user') AND ${fence('$2', '$3')}`,
        [jobId, this.#lease.hostId, this.#lease.epoch],
      );
      if (rowCount === 1) return { host: this.#lease.hostId, took: true, gone: false };
    }
    const { host, gone } = await this.#ranOn(jobId, true);
    return { host, took: false, gone };
  }

  /** The host whose run folder has the job's logs: the one that ran its turns (for a job taken from a gone host, that host). Null when none did or the job is unknown. */
  async logsHost(jobId: string): Promise<string | null> {
    return (await this.#ranOn(jobId, false)).host;
  }

  async #ranOn(jobId: string, activeOnly: boolean): Promise<{ host: string | null; gone: boolean }> {
    const { rows } = await this.#pool.query<{ host: string | null; gone: boolean }>(
      `SELECT coalesce(taken_from, owner_host) AS host, taken_from IS NOT NULL AS gone FROM skilld.jobs
       WHERE job_id = $1 ${activeOnly ? `AND status IN ('queued', 'running', 'waiting_user')` : ''}`,
      [jobId],
    );
    return { host: rows[0]?.host ?? null, gone: rows[0]?.gone ?? false };
  }

  /**
   * Takes for gone one host whose lease lapsed, if any, in one transaction: its epoch moves on
   * (its late writes are refused), its jobs in a turn or a sticky wait pass to this host to be
   * failed (`takenOver`), and its queued jobs that never started go back to the queue. Jobs whose
   * next turn needs its files (a resumable wait, a resumed job) stay with it for `graceSec` (see
   * `overdue`).
   * Only a host that has renewed its own lease for a whole lease reaps, and not in the first
   * lease after the database started: after an outage every host gets the time to renew first.
   */
  async reapOne(): Promise<ReapedHost | null> {
    return inTransaction(this.#pool, async (client) => {
      const me = [this.#lease.hostId, this.#lease.epoch, this.#lease.ttlMs];
      const { rows: dead } = await client.query<{ host_id: string }>(
        `SELECT host_id FROM skilld.hosts
         WHERE state IN ('live', 'stopped') AND lease_until < now() AND host_id <> $1
           AND EXISTS (SELECT 1 FROM skilld.hosts WHERE host_id = $1 AND epoch = $2 AND state = 'live' AND renewing_since <= now() - $3 * interval '1 millisecond')
           AND now() - pg_postmaster_start_time() > $3 * interval '1 millisecond'
         ORDER BY host_id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        me,
      );
      const host = dead[0]?.host_id;
      if (host === undefined) return null;
      await client.query(`UPDATE skilld.hosts SET state = 'reaped', epoch = epoch + 1, left_at = coalesce(left_at, now()) WHERE host_id = $1`, [host]);
      const { rowCount: taken } = await client.query(
        `UPDATE skilld.jobs SET owner_host = $2, owner_epoch = $3, taken_from = $1
         WHERE owner_host = $1 AND (status = 'running' OR (status = 'waiting_user' AND ${STICKY}))`,
        [host, this.#lease.hostId, this.#lease.epoch],
      );
      return { host_id: host, taken: taken ?? 0, released: await releaseUnstarted(client, host) };
    });
  }

  /** Jobs left with a gone host for longer than `graceSec` (they wait for its files): this host takes them, to fail them (`takenOver`). Returns how many. */
  async overdue(graceSec: number): Promise<number> {
    const { rowCount } = await this.#pool.query(
      `WITH o AS (
         SELECT j.job_id, h.host_id FROM skilld.jobs j JOIN skilld.hosts h ON h.host_id = j.owner_host
         WHERE j.status IN ('queued', 'running', 'waiting_user') AND h.state = 'reaped' AND h.left_at <= now() - $3 * interval '1 second'
         ORDER BY j.job_id LIMIT 100 FOR UPDATE OF j SKIP LOCKED)
       UPDATE skilld.jobs j SET owner_host = $1, owner_epoch = $2, taken_from = o.host_id FROM o
       WHERE j.job_id = o.job_id AND ${fence('$1', '$2')}`,
      [this.#lease.hostId, this.#lease.epoch, graceSec],
    );
    return rowCount ?? 0;
  }

  /** The active jobs this host took from gone hosts: each is to be failed, whether or not the statement that took it was answered. */
  async takenOver(): Promise<TakenJob[]> {
    const { rows } = await this.#pool.query<TakenJob>(
      `SELECT job_id, status, ${STICKY} AS sticky, taken_from FROM skilld.jobs
       WHERE owner_host = $1 AND taken_from IS NOT NULL AND status IN ('queued', 'running', 'waiting_user') ORDER BY job_id`,
      [this.#lease.hostId],
    );
    return rows;
  }

  /** The queued jobs this host holds to run; a claim whose answer was lost leaves some that nothing here waits for (cluster/member.ts). */
  async heldQueued(): Promise<string[]> {
    const { rows } = await this.#pool.query<{ job_id: string }>(
      `SELECT job_id FROM skilld.jobs WHERE owner_host = $1 AND status = 'queued' AND taken_from IS NULL ORDER BY job_id`,
      [this.#lease.hostId],
    );
    return rows.map((row) => row.job_id);
  }

  /** Clean stop: queued jobs this host holds that never started go back to the queue for the others. */
  async releaseUnstarted(): Promise<void> {
    await releaseUnstarted(this.#pool, this.#lease.hostId);
  }
}

/** Gives a host's queued jobs that never started back to the queue (announced); returns how many. */
async function releaseUnstarted(db: Pick<Pool, 'query'>, hostId: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE skilld.jobs SET owner_host = NULL, owner_epoch = NULL WHERE owner_host = $1 AND status = 'queued' AND (doc->>'attempt')::integer = 0`,
    [hostId],
  );
  if ((rowCount ?? 0) > 0) await db.query(`SELECT pg_notify('${QUEUED_CHANNEL}', '')`);
  return rowCount ?? 0;
}
