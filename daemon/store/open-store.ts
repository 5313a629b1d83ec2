import { Custody } from '../cluster/custody.js';
import { HostLease } from '../cluster/host-lease.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { EventLog, type JobEvents } from '../jobs/events.js';
import type { Logger } from '../logger.js';
import { FolderDocs } from './folder-docs.js';
import type { JobDocs } from './job-docs.js';
import { LowdbStore } from './lowdb-store.js';
import { migrate } from './pg/migrations.js';
import { PgDocs } from './pg/pg-docs.js';
import { PgEvents } from './pg/pg-events.js';
import { PgStore } from './pg/pg-store.js';
import { openPool, type Pool } from './pg/pool.js';
import type { Store } from './store.js';

/** Where jobs are kept: their records, documents and events, from one store. */
export interface JobStorage {
  store: Store;
  docs: JobDocs;
  events: JobEvents;
  /** A store shared with other daemons: this host's lease and its hold on jobs. Null for the files store. */
  shared: SharedStore | null;
}

export interface SharedStore {
  url: string;
  pool: Pool;
  lease: HostLease;
  custody: Custody;
  /** The same as `events`: it also hears what other hosts store. */
  events: PgEvents;
}

/**
 * Opens the configured store: the files under state_dir, or PostgreSQL (its schema brought to
 * this daemon's version first; a newer one stops start-up). Run folders stay under `runsDir`.
 * `onFenced` is called when a shared store refuses this host's writes: the other hosts took it
 * for gone.
 */
export async function openStorage(config: Config, runsDir: string, clock: Clock, logger: Logger, version: string, onFenced: () => void): Promise<JobStorage> {
  if (config.store === 'files') {
    const store = await LowdbStore.open(config.state_dir, () => clock.now());
    return { store, docs: new FolderDocs(store, runsDir), events: new EventLog(runsDir, clock), shared: null };
  }
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
  return {
    store: new PgStore(pool, lease, onFenced),
    docs: new PgDocs(pool, runsDir),
    events,
    shared: { url: config.store, pool, lease, custody: new Custody(pool, lease), events },
  };
}
