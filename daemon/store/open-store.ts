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
import { openPool } from './pg/pool.js';
import type { Store } from './store.js';

/** Where jobs are kept: their records, documents and events, from one store. */
export interface JobStorage {
  store: Store;
  docs: JobDocs;
  events: JobEvents;
}

/**
 * Opens the configured store: the files under state_dir, or PostgreSQL (its schema brought to
 * this daemon's version first; a newer one stops start-up). Run folders stay under `runsDir`.
 */
export async function openStorage(config: Config, runsDir: string, clock: Clock, logger: Logger, version: string): Promise<JobStorage> {
  if (config.store === 'files') {
    const store = await LowdbStore.open(config.state_dir, () => clock.now());
    return { store, docs: new FolderDocs(store, runsDir), events: new EventLog(runsDir, clock) };
  }
  const pool = openPool(config.store, logger);
  let store: PgStore;
  try {
    const applied = await migrate(pool, version);
    if (applied.length > 0) logger.info({ versions: applied }, 'database schema brought up to date');
    store = await PgStore.open(pool, config.host_id);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return { store, docs: new PgDocs(pool, runsDir), events: new PgEvents(pool, clock) };
}
