import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Low, type Adapter } from 'lowdb';
import type { Job } from '../jobs/job.js';
import { isTerminal } from '../jobs/states.js';
import { CoalescingWriter, writeFileDurably } from './durable-file.js';
import { FinishedLog } from './finished-log.js';
import { JobIndex } from './job-index.js';
import type { JobQuery, ProcessRecord, Store, StoreNotice } from './store.js';

export const SCHEMA_VERSION = 1;

/** The hot state file: only jobs that are not finished. */
interface HotState {
  schema_version: number;
  jobs: Record<string, Job>;
  processes?: Record<string, ProcessRecord>;
}

/** Thrown when the state file has a schema this daemon does not know: it refuses to guess. */
export class StateVersionError extends Error {
  override readonly name = 'StateVersionError';
}

/** lowdb adapter that writes durably and reports an unreadable file instead of replacing it. */
class DurableJsonAdapter implements Adapter<HotState> {
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
  }

  async read(): Promise<HotState | null> {
    const text = await readFile(this.#path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (text === null) return null;
    const data = JSON.parse(text) as unknown;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new SyntaxError('not a state object');
    const version = (data as { schema_version?: unknown }).schema_version;
    // A file another version wrote is refused, never moved aside: that daemon's data must stay intact.
    if (typeof version === 'number' && version !== SCHEMA_VERSION) {
      throw new StateVersionError(`${this.#path} has schema_version ${version}; this daemon reads ${SCHEMA_VERSION}`);
    }
    const jobs = (data as { jobs?: unknown }).jobs;
    if (version !== SCHEMA_VERSION || typeof jobs !== 'object' || jobs === null || Array.isArray(jobs)) throw new SyntaxError('not a state object');
    return data as HotState;
  }

  write(data: HotState): Promise<void> {
    return writeFileDurably(this.#path, `${JSON.stringify(data)}\n`);
  }
}

/** The Store on lowdb: hot state in `state.json`, finished jobs in `jobs-finished.ndjson`. */
export class LowdbStore implements Store {
  readonly notices: StoreNotice[] = [];
  readonly #statePath: string;
  readonly #db: Low<HotState>;
  readonly #finished: FinishedLog;
  readonly #index = new JobIndex();
  readonly #writer: CoalescingWriter;

  private constructor(stateDir: string) {
    this.#statePath = join(stateDir, 'state.json');
    this.#db = new Low(new DurableJsonAdapter(this.#statePath), { schema_version: SCHEMA_VERSION, jobs: {} });
    this.#finished = new FinishedLog(join(stateDir, 'jobs-finished.ndjson'));
    this.#writer = new CoalescingWriter(() => this.#db.write());
  }

  /** Opens the store in `stateDir` (which must exist). A corrupt state file is moved aside and reported. */
  static async open(stateDir: string, now: () => Date): Promise<LowdbStore> {
    const store = new LowdbStore(stateDir);
    await store.#load(now);
    return store;
  }

  async #load(now: () => Date): Promise<void> {
    try {
      await this.#db.read();
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      const aside = `${this.#statePath}.corrupt-${now().toISOString().replace(/[:.]/g, '-')}`;
      await rename(this.#statePath, aside);
      this.notices.push({ code: 'STATE_FILE_CORRUPT', message: `state file unreadable (${error.message}); kept aside as ${aside}`, path: aside });
      this.#db.data = { schema_version: SCHEMA_VERSION, jobs: {} };
    }
    const finished = await this.#finished.load(this.notices);
    for (const job of finished) this.#index.put(job);
    for (const job of Object.values(this.#db.data.jobs)) {
      // A job in both places was finished and appended before the hot file dropped it: finished wins.
      if (this.#index.get(job.job_id) === undefined) this.#index.put(job);
      else delete this.#db.data.jobs[job.job_id];
    }
    this.#index.sort();
  }

  getJob(jobId: string): Job | undefined {
    return this.#index.get(jobId);
  }

  listJobs(query: JobQuery): { jobs: Job[]; next: string | null } {
    return this.#index.list(query);
  }

  activeJobs(): Job[] {
    return Object.values(this.#db.data.jobs).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.job_id.localeCompare(b.job_id));
  }

  countByStatus(): ReturnType<Store['countByStatus']> {
    return this.#index.counts();
  }

  /**
   * Readers see the change only once it is on disk, and in the same turn of the event loop as the
   * caller's continuation: nothing can observe a status whose side effects (slot release,
   * events) have not happened yet.
   */
  async putJob(job: Job): Promise<void> {
    const stored = structuredClone(job);
    if (isTerminal(stored.status)) {
      await this.#finished.append(stored);
      delete this.#db.data.jobs[stored.job_id];
    } else {
      this.#db.data.jobs[stored.job_id] = stored;
    }
    await this.#writer.flush();
    this.#index.put(stored);
  }

  processes(): ProcessRecord[] {
    return Object.values(this.#db.data.processes ?? {});
  }

  async putProcess(record: ProcessRecord): Promise<void> {
    this.#db.data.processes = { ...this.#db.data.processes, [String(record.pid)]: record };
    await this.#writer.flush();
  }

  async removeProcess(pid: number): Promise<void> {
    if (this.#db.data.processes?.[String(pid)] === undefined) return;
    delete this.#db.data.processes[String(pid)];
    await this.#writer.flush();
  }

  async close(): Promise<void> {
    await this.#writer.flush();
    await this.#finished.close();
  }
}
