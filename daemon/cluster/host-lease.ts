import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileDurably } from '../store/durable-file.js';
import type { HostEpoch } from '../store/pg/host-fence.js';
import { inTransaction, type Pool } from '../store/pg/pool.js';

/** What a host tells the others about itself (`daemon/status` of any host shows it). */
export interface HostInfo {
  version: string;
  pid: number;
  max_concurrent: number;
}

/** One host as `daemon/hosts` shows it (docs/protocol.md). */
export interface HostView {
  host_id: string;
  /** `live`; `lapsed` when its lease ran out and no host has taken it for gone yet; `stopped`; `reaped` (taken for gone). */
  state: 'live' | 'lapsed' | 'stopped' | 'reaped';
  lease_until: string | null;
  version: string;
  pid: number;
  max_concurrent: number;
  /** The active jobs it holds, by status. */
  jobs: { queued: number; running: number; waiting_user: number };
}

/** Every host of the shared store, with the active jobs each holds (its own queued ones included). */
export async function listHosts(pool: Pool): Promise<HostView[]> {
  const { rows } = await pool.query<{ host_id: string; state: HostView['state']; lease_until: Date; info: HostInfo; queued: number; running: number; waiting_user: number }>(
    `SELECT h.host_id, CASE WHEN h.state = 'live' AND h.lease_until <= now() THEN 'lapsed' ELSE h.state END AS state, h.lease_until, h.info,
            count(j.job_id) FILTER (WHERE j.status = 'queued')::integer AS queued,
            count(j.job_id) FILTER (WHERE j.status = 'running')::integer AS running,
            count(j.job_id) FILTER (WHERE j.status = 'waiting_user')::integer AS waiting_user
       FROM skilld.hosts h LEFT JOIN skilld.jobs j ON j.owner_host = h.host_id AND j.status IN ('queued', 'running', 'waiting_user')
      GROUP BY h.host_id ORDER BY h.host_id`,
  );
  return rows.map((row) => ({
    host_id: row.host_id,
    state: row.state,
    lease_until: row.lease_until.toISOString(),
    version: row.info.version,
    pid: row.info.pid,
    max_concurrent: row.info.max_concurrent,
    jobs: { queued: row.queued, running: row.running, waiting_user: row.waiting_user },
  }));
}

/** Another daemon holds this host id and is alive: two daemons must not share one. */
export class HostInUseError extends Error {
  override readonly name = 'HostInUseError';
}

/**
 * This daemon's row among the hosts of a shared store, and its lease. The lease is kept in the
 * database's time (hosts' clocks may differ) and renewed every third of its length; a host whose
 * lease lapsed is taken for gone, and its jobs are settled by another (cluster/reaper.ts). Each
 * start is a new epoch: a write of an older epoch is refused (store/pg/host-fence.ts), so a host that was taken
 * for gone cannot change the jobs that were settled for it, even if it is still running.
 */
export class HostLease implements HostEpoch {
  readonly hostId: string;
  readonly ttlMs: number;
  readonly #pool: Pool;
  #epoch = 0;

  constructor(pool: Pool, hostId: string, ttlMs: number) {
    this.#pool = pool;
    this.hostId = hostId;
    this.ttlMs = ttlMs;
  }

  get epoch(): number {
    return this.#epoch;
  }

  /**
   * Joins (or rejoins) the hosts: a new epoch, a fresh lease, and the jobs this host still holds
   * carried over to the epoch. `bootToken` tells this host's own restart from a second daemon
   * under the same id, which is refused while the first one's lease runs.
   */
  async join(bootToken: string, engines: readonly string[], info: HostInfo): Promise<void> {
    this.#epoch = await inTransaction(this.#pool, async (client) => {
      const { rows: known } = await client.query<{ boot_token: string; live: boolean }>(
        `SELECT boot_token, state = 'live' AND lease_until > now() AS live FROM skilld.hosts WHERE host_id = $1 FOR UPDATE`,
        [this.hostId],
      );
      const other = known[0];
      if (other !== undefined && other.live && other.boot_token !== bootToken) {
        throw new HostInUseError(`another skilld runs as host "${this.hostId}" on this store (its lease is current); give each daemon its own host_id`);
      }
      const { rows } = await client.query<{ epoch: string }>(
        `INSERT INTO skilld.hosts (host_id, epoch, boot_token, state, lease_until, renewing_since, engines, info)
         VALUES ($1, 1, $2, 'live', now() + $3 * interval '1 millisecond', now(), $4, $5)
         ON CONFLICT (host_id) DO UPDATE SET epoch = hosts.epoch + 1, boot_token = EXCLUDED.boot_token, state = 'live',
           lease_until = EXCLUDED.lease_until, renewing_since = now(), left_at = NULL, engines = EXCLUDED.engines, info = EXCLUDED.info
         RETURNING epoch`,
        [this.hostId, bootToken, this.ttlMs, engines, JSON.stringify(info)],
      );
      const epoch = Number(rows[0]?.epoch);
      await client.query(`UPDATE skilld.jobs SET owner_epoch = $2 WHERE owner_host = $1 AND status IN ('queued', 'running', 'waiting_user')`, [this.hostId, epoch]);
      // Jobs in a turn or a wait that nobody holds (left by a daemon of schema 1, which had no
      // hosts) are this daemon's to settle, as its own restart would.
      await client.query(
        `UPDATE skilld.jobs SET owner_host = $1, owner_epoch = $2 WHERE owner_host IS NULL AND status IN ('running', 'waiting_user')`,
        [this.hostId, epoch],
      );
      return epoch;
    });
  }

  /**
   * Extends the lease; false when this host was taken for gone (its epoch moved on), which the
   * daemon answers by stopping. A renewal after a failed one restarts `renewing_since`: a host
   * takes others for gone only after it has itself renewed for a whole lease.
   */
  async renew(missedLast: boolean): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE skilld.hosts SET lease_until = now() + $3 * interval '1 millisecond', renewing_since = CASE WHEN $4 THEN now() ELSE renewing_since END
       WHERE host_id = $1 AND epoch = $2 AND state = 'live'`,
      [this.hostId, this.#epoch, this.ttlMs, missedLast],
    );
    return rowCount === 1;
  }

  /** A clean stop: the lease ends now, so that another host settles this one's jobs without waiting for it to lapse. */
  async leave(): Promise<void> {
    await this.#pool.query(
      `UPDATE skilld.hosts SET state = 'stopped', lease_until = now(), left_at = now() WHERE host_id = $1 AND epoch = $2 AND state = 'live'`,
      [this.hostId, this.#epoch],
    );
  }
}

/** The token that tells this host's restarts from another daemon under the same id: made once, kept in the state folder. */
export async function bootToken(stateDir: string): Promise<string> {
  const file = join(stateDir, 'host.json');
  const known = await readFile(file, 'utf8').then((text) => (JSON.parse(text) as { boot_token?: unknown }).boot_token, () => undefined);
  if (typeof known === 'string' && known !== '') return known;
  const token = randomUUID();
  await writeFileDurably(file, `${JSON.stringify({ boot_token: token })}\n`);
  return token;
}
