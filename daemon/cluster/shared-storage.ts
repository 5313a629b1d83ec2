import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import type { Logger } from '../base/logger.js';
import type { JobStorage } from '../store/open-store.js';
import { migrate } from '../store/pg/migrations.js';
import { PgDocs } from '../store/pg/pg-docs.js';
import { PgEvents } from '../store/pg/pg-events.js';
import { PgStore } from '../store/pg/pg-store.js';
import { openPool, type Pool } from '../store/pg/pool.js';
import { Custody } from './custody.js';
import { HostLease, listHosts, type HostView } from './host-lease.js';
import { joinCluster, type JoinDeps, type Membership } from './join.js';

/** A PostgreSQL store shared with other daemons: the jobs, and this host's lease and hold on them. */
export interface SharedStorage extends JobStorage {
  url: string;
  pool: Pool;
  lease: HostLease;
  custody: Custody;
  /** The same as `events`: it also hears what other hosts store. */
  events: PgEvents;
  /** Every host of the store (`daemon/hosts`). */
  hosts(): Promise<HostView[]>;
  /** Joins the hosts (before recovery): a new epoch of this host's lease. */
  join(d: JoinDeps): Promise<Membership>;
}

/**
 * Opens the PostgreSQL store, its schema brought to this daemon's version first (a newer one stops
 * start-up). `onFenced` is called when the store refuses this host's writes: the other hosts took
 * it for gone.
 */
export async function openSharedStorage(config: Config, runsDir: string, clock: Clock, logger: Logger, version: string, onFenced: () => void): Promise<SharedStorage> {
  const pool = openPool(config.store, logger, Math.floor(config.lease_ttl_ms / 3));
  try {
    const applied = await migrate(pool, version);
    if (applied.length > 0) logger.info({ versions: applied }, 'database schema brought up to date');
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  const lease = new HostLease(pool, config.host_id, config.lease_ttl_ms);
  const events = new PgEvents(pool, clock);
  const shared: SharedStorage = {
    store: new PgStore(pool, lease, onFenced),
    docs: new PgDocs(pool, runsDir),
    events,
    url: config.store,
    pool,
    lease,
    custody: new Custody(pool, lease),
    hosts: () => listHosts(pool),
    join: (d) => joinCluster(shared, d),
  };
  return shared;
}
