import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import { EventLog } from './event-log.js';
import { FolderDocs } from './folder-docs.js';
import type { JobDocs } from './job-docs.js';
import { LowdbStore } from './lowdb-store.js';
import type { Store } from './store.js';
import type { JobEvents } from '../model/events.js';

/** Where jobs are kept: their records, documents and events, from one store. */
export interface JobStorage {
  store: Store;
  docs: JobDocs;
  events: JobEvents;
}

/**
 * The files store under state_dir; run folders under `runsDir`. A PostgreSQL store shared by
 * several daemons is opened by cluster/shared-storage.ts, which the daemon loads only for one:
 * a daemon of its own never loads the database driver.
 */
export async function openFilesStorage(config: Config, runsDir: string, clock: Clock): Promise<JobStorage> {
  const store = await LowdbStore.open(config.state_dir, () => clock.now());
  return { store, docs: new FolderDocs(store, runsDir), events: new EventLog(runsDir, clock) };
}
