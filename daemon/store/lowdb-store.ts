import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Low, type Adapter } from 'lowdb';
import type { Job } from '../model/job.js';
import { isTerminal } from '../model/states.js';
import { AppendLog } from './append-log.js';
import { writeFileDurably } from './durable-file.js';
import { FinishedLog, type FinishedRecord } from './finished-log.js';
import { JobIndex } from './job-index.js';
import { jobProblem, processProblem } from './records.js';
import type { ExpiredJob, ExpiryQuery, JobQuery, ProcessRecord, Store, StoreNotice } from './store.js';
import { isStorageFault } from './storage-fault.js';

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
  /** Size of the snapshot last read or written, for the compaction threshold. */
  bytes = 0;

  constructor(path: string) {
    this.#path = path;
  }

  async read(): Promise<HotState | null> {
    const text = await readFile(this.#path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (text === null) return null;
    this.bytes = Buffer.byteLength(text);
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
    const text = `${JSON.stringify(data)}\n`;
    this.bytes = Buffer.byteLength(text);
    return writeFileDurably(this.#path, text);
  }
}

/** The journal is folded into the snapshot once it is larger than this and than twice the snapshot. */
export const COMPACT_MIN_BYTES = 256 * 1024;

/**
 * One line of the journal: a job's new state, jobs dropped from the hot state (finished jobs
 * being removed, whose active versions the hot files may still hold), or a process record put or
 * removed.
 */
type JournalEntry = { job: Job } | { dropped: string[] } | { process: ProcessRecord } | { process_removed: number };

/** A stored record that could not be loaded: kept aside, with where it was and why. */
interface DamagedRecord {
  from: 'state.json' | 'state.wal';
  key?: string;
  problem: string;
  record: unknown;
}

function entryProblem(entry: unknown): string | null {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'is not a journal entry';
  if ('job' in entry) return jobProblem(entry.job);
  if ('dropped' in entry) return Array.isArray(entry.dropped) && entry.dropped.every((id) => typeof id === 'string') ? null : 'dropped is not a list of job ids';
  if ('process' in entry) return processProblem(entry.process);
  if ('process_removed' in entry) return Number.isSafeInteger(entry.process_removed) ? null : 'process_removed is not a pid';
  return 'is not a journal entry';
}

/** Thresholds of the files store's housekeeping (smaller ones let tests reach every step). */
export interface LowdbStoreOptions {
  /** The journal is folded into the snapshot once it is larger than this and than twice the snapshot. */
  compactAtBytes?: number;
  /** The finished log is rewritten once its removed lines weigh more than this (and an eighth of the rest). */
  rewriteAtDeadBytes?: number;
}

/**
 * The Store on lowdb. The hot state (active jobs, engine processes) is the lowdb snapshot
 * `state.json` plus the journal `state.wal`: each change is one appended line, synced with the
 * others that arrive meanwhile, so a write costs the same with 10 or 10,000 active jobs. The
 * journal is folded into the snapshot between writes once it has grown. Finished jobs go to
 * `jobs-finished.ndjson`.
 *
 * One truth per job (docs/state.md): a job that finishes is appended to the finished log, and
 * its active versions stay in the hot files until the next compaction; on load the finished line
 * wins over them. A removal never lets them come back: a job removed while the hot files may
 * still hold it is first dropped from them by a journal line, then tombstoned in the finished
 * log; and a job a tombstone removed is dropped from the hot state at load whatever it says.
 */
export class LowdbStore implements Store {
  readonly notices: StoreNotice[] = [];
  /** Damaged records not yet written aside (the disk was full at start): written before a compaction drops them from the snapshot. */
  #pendingAside: { damaged: readonly DamagedRecord[]; path: string } | null = null;
  readonly #statePath: string;
  readonly #db: Low<HotState>;
  readonly #finished: FinishedLog;
  readonly #journal: AppendLog;
  readonly #index = new JobIndex();
  readonly #snapshot: DurableJsonAdapter;
  /**
   * Jobs that finished (or were found finished at load) since the hot files were last written
   * whole: their active versions may still be in `state.json` or `state.wal`.
   */
  readonly #staleInHotFiles = new Set<string>();

  private constructor(stateDir: string, options: LowdbStoreOptions) {
    this.#statePath = join(stateDir, 'state.json');
    this.#snapshot = new DurableJsonAdapter(this.#statePath);
    this.#db = new Low(this.#snapshot, { schema_version: SCHEMA_VERSION, jobs: {} });
    this.#finished = new FinishedLog(join(stateDir, 'jobs-finished.ndjson'), options.rewriteAtDeadBytes);
    this.#journal = new AppendLog(join(stateDir, 'state.wal'));
    const compactAt = options.compactAtBytes ?? COMPACT_MIN_BYTES;
    this.#journal.onBetweenBatches(async () => {
      if (this.#journal.size > compactAt && this.#journal.size > 2 * this.#snapshot.bytes) await this.#compact();
    });
  }

  /** Opens the store in `stateDir` (which must exist). A corrupt state file is moved aside and reported. */
  static async open(stateDir: string, now: () => Date, options: LowdbStoreOptions = {}): Promise<LowdbStore> {
    const store = new LowdbStore(stateDir, options);
    await store.#load(now);
    return store;
  }

  async #load(now: () => Date): Promise<void> {
    const stamp = now().toISOString().replace(/[:.]/g, '-');
    try {
      await this.#db.read();
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      const aside = `${this.#statePath}.corrupt-${stamp}`;
      await rename(this.#statePath, aside);
      this.notices.push({ code: 'STATE_FILE_CORRUPT', message: `state file unreadable (${error.message}); kept aside as ${aside}`, path: aside });
      this.#db.data = { schema_version: SCHEMA_VERSION, jobs: {} };
    }
    const damaged = this.#dropDamagedSnapshotRecords();
    damaged.push(...(await this.#replayJournal()));
    if (damaged.length > 0) this.#pendingAside = { damaged, path: `${this.#statePath.slice(0, -'.json'.length)}.damaged-${stamp}.ndjson` };
    for (const record of await this.#finished.load(this.notices)) this.#index.putFinished(record);
    const removed = this.#finished.takeRemovedAtLoad();
    for (const job of Object.values(this.#db.data.jobs)) {
      // A job in both places was finished and appended before the hot files dropped it: finished
      // wins. One a tombstone removed stays removed (a daemon before this rule could leave it so).
      if (!this.#index.has(job.job_id) && !removed.has(job.job_id)) {
        this.#index.put(job);
        continue;
      }
      delete this.#db.data.jobs[job.job_id];
      this.#staleInHotFiles.add(job.job_id);
    }
    this.#index.sort();
    // A snapshot without the damaged records (or the stale ones) replaces the one that had them,
    // once they are aside. Opening needs no free space: on a full disk the journal is kept as it
    // is (replaying it again is harmless) and the state is compacted once a later write finds room.
    if (this.#journal.size > 0 || damaged.length > 0 || this.#staleInHotFiles.size > 0) {
      await this.#compact().catch((error: unknown) => {
        if (!isStorageFault(error)) throw error;
        this.notices.push({ code: 'STATE_COMPACTION_DEFERRED', message: `the state could not be compacted at start (${(error as NodeJS.ErrnoException).code ?? 'error'}): the journal is kept and replayed, and compacted once there is room`, path: this.#statePath });
      });
    }
  }

  /** Takes every snapshot record that does not check out out of the hot state, and returns them. */
  #dropDamagedSnapshotRecords(): DamagedRecord[] {
    const data = this.#db.data;
    const damaged: DamagedRecord[] = [];
    for (const [key, job] of Object.entries(data.jobs)) {
      const problem = jobProblem(job, key);
      if (problem === null) continue;
      damaged.push({ from: 'state.json', key, problem, record: job });
      delete data.jobs[key];
    }
    const processes: unknown = data.processes ?? {};
    if (typeof processes !== 'object' || processes === null || Array.isArray(processes)) {
      damaged.push({ from: 'state.json', key: 'processes', problem: 'processes is not an object', record: processes });
      data.processes = {};
      return damaged;
    }
    for (const [key, record] of Object.entries(processes)) {
      const problem = processProblem(record, key);
      if (problem === null) continue;
      damaged.push({ from: 'state.json', key: `processes.${key}`, problem, record });
      delete (processes as Record<string, unknown>)[key];
    }
    return damaged;
  }

  /**
   * Damaged records are written to a file of their own beside the state and reported, never
   * loaded with a guessed status and never simply dropped.
   */
  async #keepAside(damaged: readonly DamagedRecord[], path: string): Promise<void> {
    if (damaged.length === 0) return;
    await writeFileDurably(path, damaged.map((record) => `${JSON.stringify(record)}\n`).join(''));
    const first = damaged[0] as DamagedRecord;
    const message = `${damaged.length} stored record(s) could not be loaded (first, in ${first.from}: ${first.problem}); kept aside in ${path}`;
    this.notices.push({ code: 'STATE_RECORD_DAMAGED', message, path });
  }

  /** Applies the journal to the snapshot; a torn last line (a crash mid-append) is cut off. Returns the lines it could not apply. */
  async #replayJournal(): Promise<DamagedRecord[]> {
    const text = await this.#journal.open();
    const lines = text.split('\n');
    const torn = lines.pop() ?? '';
    const damaged: DamagedRecord[] = [];
    for (const line of lines) {
      if (line === '') continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        this.notices.push({ code: 'STATE_JOURNAL_DAMAGED', message: 'an unreadable journal line was skipped', path: this.#journal.path });
        damaged.push({ from: 'state.wal', problem: 'not JSON', record: line });
        continue;
      }
      const problem = entryProblem(entry);
      if (problem === null) this.#apply(entry as JournalEntry);
      else damaged.push({ from: 'state.wal', problem, record: entry });
    }
    if (torn !== '') {
      this.notices.push({ code: 'STATE_JOURNAL_DAMAGED', message: 'a torn last journal line was cut off', path: this.#journal.path });
      await this.#journal.cut(Buffer.byteLength(text) - Buffer.byteLength(torn));
    }
    return damaged;
  }

  #apply(entry: JournalEntry): void {
    const data = this.#db.data;
    if ('job' in entry) data.jobs[entry.job.job_id] = entry.job;
    else if ('dropped' in entry) for (const id of entry.dropped) delete data.jobs[id];
    else if ('process' in entry) (data.processes ??= {})[String(entry.process.pid)] = entry.process;
    else if (data.processes !== undefined) delete data.processes[String(entry.process_removed)];
  }

  /** Writes the whole hot state as the snapshot, then empties the journal (replaying it again is harmless). */
  async #compact(): Promise<void> {
    if (this.#pendingAside !== null) {
      await this.#keepAside(this.#pendingAside.damaged, this.#pendingAside.path);
      this.#pendingAside = null;
    }
    // The snapshot is serialised as the write begins: what finished before is not in it.
    const covered = [...this.#staleInHotFiles];
    await this.#db.write();
    await this.#journal.cut(0);
    for (const id of covered) this.#staleInHotFiles.delete(id);
  }

  // Reads are answered from memory: the files store has a single writer, this daemon.
  async getJob(jobId: string): Promise<Job | undefined> {
    return this.#index.get(jobId);
  }

  async hasJob(jobId: string): Promise<boolean> {
    return this.#index.has(jobId);
  }

  async listJobs(query: JobQuery): Promise<{ jobs: Job[]; next: string | null }> {
    return this.#index.list(query);
  }

  async activeJobs(): Promise<Job[]> {
    return Object.values(this.#db.data.jobs).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.job_id.localeCompare(b.job_id));
  }

  async countByStatus(): ReturnType<Store['countByStatus']> {
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
      // The finished log is the durable record; the snapshot drops the job at the next compaction.
      const record = await this.#finished.append(stored);
      delete this.#db.data.jobs[stored.job_id];
      this.#staleInHotFiles.add(stored.job_id);
      this.#index.putFinished(record);
    } else {
      await this.#record({ job: stored });
      this.#index.put(stored);
    }
  }

  async expiredJobs(query: ExpiryQuery): Promise<ExpiredJob[]> {
    const statuses = query.statuses === undefined ? null : new Set(query.statuses);
    const counted = (record: FinishedRecord): boolean => statuses === null || statuses.has(record.status);
    let beyond = 0;
    if (query.keep_newest !== undefined) {
      for (const record of this.#finished.records()) if (counted(record)) beyond += 1;
      beyond = Math.max(0, beyond - query.keep_newest);
    }
    const before = query.finished_before;
    const expired: ExpiredJob[] = [];
    // The log holds jobs in the order they finished: the ones beyond `keep_newest` come first.
    for (const record of this.#finished.records()) {
      if (expired.length === query.limit) break;
      if (!counted(record)) continue;
      const old = beyond > 0 || (before !== undefined && record.finished_at !== null && record.finished_at < before);
      beyond -= 1;
      if (old) expired.push({ job_id: record.job_id, status: record.status, skill_id: record.skill_id, finished_at: record.finished_at });
    }
    return expired;
  }

  async removeJobs(jobIds: readonly string[]): Promise<string[]> {
    const removed = jobIds.filter((id) => this.#db.data.jobs[id] === undefined && this.#index.has(id));
    // Out of the hot files first: a crash after the tombstone must not find them active there.
    const stale = removed.filter((id) => this.#staleInHotFiles.has(id));
    if (stale.length > 0) await this.#record({ dropped: stale });
    await this.#finished.remove(removed);
    this.#index.remove(removed);
    return removed;
  }

  async existingJobs(jobIds: readonly string[]): Promise<Set<string>> {
    return new Set(jobIds.filter((id) => this.#index.has(id)));
  }

  /** Every job is this daemon's. */
  async holders(): Promise<Map<string, string>> {
    return new Map();
  }

  /** The change is applied to the hot state only once its line is on disk: a failed write leaves no trace. */
  #record(entry: JournalEntry): Promise<void> {
    return this.#journal.append(`${JSON.stringify(entry)}\n`, () => this.#apply(entry));
  }

  async processes(): Promise<ProcessRecord[]> {
    return Object.values(this.#db.data.processes ?? {});
  }

  putProcess(record: ProcessRecord): Promise<void> {
    return this.#record({ process: record });
  }

  async removeProcess(pid: number): Promise<void> {
    if (this.#db.data.processes?.[String(pid)] === undefined) return;
    await this.#record({ process_removed: pid });
  }

  async close(): Promise<void> {
    await this.#journal.flushed();
    // Folding the journal in only makes the next start faster: when it cannot be written, the
    // journal still holds every change.
    await this.#compact().catch(() => undefined);
    await this.#journal.close();
    await this.#finished.close();
  }
}
