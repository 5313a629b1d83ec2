import type { Job } from '../jobs/job.js';
import { inTransaction, type Pool } from '../store/pg/pool.js';
import { HostLease } from './host-lease.js';

/** The channel a new or released queued job is announced on: every host's claimer listens. */
export const QUEUED_CHANNEL = 'skilld_queued';

/** A host taken for gone, and what its jobs now need. */
export interface ReapedHost {
  host_id: string;
  /** Jobs in a turn or in a sticky wait, now held by this host to be failed: their processes were on the gone host. */
  taken: Job[];
  /** Queued jobs that had not started, given back to the queue. */
  released: number;
}

/**
 * Which host holds which job, in the shared store. Every non-finished job has at most one holder:
 * queued jobs nobody holds yet are claimed by a host with a free slot and the engine; a job keeps
 * its holder from its first turn to its end, since its workspace and engine session are on that
 * host. Every change of holder is one compare-and-set, so two hosts never hold a job at once.
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
       WHERE j.job_id = c.job_id AND ${HostLease.fence('$1', '$2')}
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
   * whether this call made this host the holder.
   */
  async holder(jobId: string, take: boolean): Promise<{ host: string | null; took: boolean }> {
    if (take) {
      const { rowCount } = await this.#pool.query(
        `UPDATE skilld.jobs SET owner_host = $2, owner_epoch = $3
         WHERE job_id = $1 AND owner_host IS NULL AND status IN ('queued', 'running', 'waiting_user') AND ${HostLease.fence('$2', '$3')}`,
        [jobId, this.#lease.hostId, this.#lease.epoch],
      );
      if (rowCount === 1) return { host: this.#lease.hostId, took: true };
    }
    const { rows } = await this.#pool.query<{ owner_host: string | null }>(
      `SELECT owner_host FROM skilld.jobs WHERE job_id = $1 AND status IN ('queued', 'running', 'waiting_user')`,
      [jobId],
    );
    return { host: rows[0]?.owner_host ?? null, took: false };
  }

  /**
   * Takes for gone one host whose lease lapsed, if any, in one transaction: its epoch moves on
   * (its late writes are refused), its jobs in a turn or a sticky wait pass to this host to be
   * failed, and its queued jobs that never started go back to the queue. Jobs whose next turn
   * needs its files (a resumable wait, a resumed job) stay with it for `graceSec` (see `overdue`).
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
      const { rows: taken } = await client.query<{ doc: Job }>(
        `UPDATE skilld.jobs SET owner_host = $2, owner_epoch = $3
         WHERE owner_host = $1 AND (status = 'running' OR (status = 'waiting_user' AND doc->'interactive_profile'->>'kind' = 'sticky_process'))
         RETURNING doc`,
        [host, this.#lease.hostId, this.#lease.epoch],
      );
      return { host_id: host, taken: taken.map((row) => row.doc), released: await releaseUnstarted(client, host) };
    });
  }

  /** Jobs left with a gone host for longer than `graceSec`: this host takes them, to fail them (HOST_LOST). */
  async overdue(graceSec: number): Promise<{ job_id: string; host_id: string }[]> {
    const { rows } = await this.#pool.query<{ job_id: string; host_id: string }>(
      `WITH o AS (
         SELECT j.job_id, h.host_id FROM skilld.jobs j JOIN skilld.hosts h ON h.host_id = j.owner_host
         WHERE j.status IN ('queued', 'running', 'waiting_user') AND h.state = 'reaped' AND h.left_at <= now() - $3 * interval '1 second'
         ORDER BY j.job_id LIMIT 100 FOR UPDATE OF j SKIP LOCKED)
       UPDATE skilld.jobs j SET owner_host = $1, owner_epoch = $2 FROM o
       WHERE j.job_id = o.job_id AND ${HostLease.fence('$1', '$2')}
       RETURNING j.job_id, o.host_id`,
      [this.#lease.hostId, this.#lease.epoch, graceSec],
    );
    return rows;
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
