import { AppendLog } from './append-log.js';
import type { Job } from '../model/job.js';
import { TERMINAL_STATUSES, type JobStatus } from '../model/states.js';
import type { StoreNotice } from './store.js';

/**
 * A finished job as the store keeps it in memory: the fields the index filters and orders by, and
 * the job's stored line, parsed only when the job is read. History costs a string per job, not a
 * tree of objects for the garbage collector to walk, and loading it does not parse every job.
 */
export interface FinishedRecord {
  job_id: string;
  status: JobStatus;
  skill_id: string;
  created_at: string;
  /** When it finished; null for a line that has none (never written so, but read without guessing). */
  finished_at: string | null;
  line: string;
}

/** A stored line of a finished job that does not parse any more (the file was damaged after load). */
export class FinishedLineError extends Error {
  override readonly name = 'FinishedLineError';
}

/**
 * One finished job as a line: the index fields come first, in this order, so that loading can read
 * them from the start of the line without parsing the rest. Lines in any other order still load.
 */
export function encodeFinishedJob(job: Job): string {
  const { job_id, status, skill_id, created_at, finished_at, ...rest } = job;
  return JSON.stringify({ job_id, status, skill_id, created_at, finished_at, ...rest });
}

/** The record of a finished job and its stored line. */
function recordOf(job: Pick<Job, 'job_id' | 'status' | 'skill_id' | 'created_at' | 'finished_at'>, line: string): FinishedRecord {
  return { job_id: job.job_id, status: job.status, skill_id: job.skill_id, created_at: job.created_at, finished_at: job.finished_at, line };
}

/** A line that removes finished jobs (retention): their earlier lines no longer count. */
interface Tombstone {
  removed: string[];
}

const TOMBSTONE_HEAD = '{"removed":';

/** The job of a stored line. */
export function decodeFinishedLine(line: string, jobId: string): Job {
  try {
    return JSON.parse(line) as Job;
  } catch {
    throw new FinishedLineError(`the stored record of finished job ${jobId} is unreadable`);
  }
}

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const HEADER = new RegExp(String.raw`^\{"job_id":(${STRING}),"status":"([a-z_]+)","skill_id":(${STRING}),"created_at":(${STRING}),"finished_at":(${STRING}|null),`);

function unquote(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
}

/**
 * The record of one stored line, or null when the line is not a finished job. A line in the
 * encoder's layout is read from its header and its last character; any other line is parsed.
 */
export function readFinishedLine(line: string): FinishedRecord | null {
  const header = HEADER.exec(line);
  if (header !== null && line.endsWith('}')) {
    const status = header[2] as JobStatus;
    if (!TERMINAL_STATUSES.has(status)) return null;
    const finished = header[5] as string;
    return { job_id: unquote(header[1] as string), status, skill_id: unquote(header[3] as string), created_at: unquote(header[4] as string), finished_at: finished === 'null' ? null : unquote(finished), line };
  }
  let job: Partial<Job>;
  try {
    job = JSON.parse(line) as Partial<Job>;
  } catch {
    return null;
  }
  if (typeof job !== 'object' || job === null || typeof job.job_id !== 'string' || typeof job.skill_id !== 'string' || typeof job.created_at !== 'string') return null;
  if (job.status === undefined || !TERMINAL_STATUSES.has(job.status)) return null;
  return recordOf({ job_id: job.job_id, status: job.status, skill_id: job.skill_id, created_at: job.created_at, finished_at: typeof job.finished_at === 'string' ? job.finished_at : null }, line);
}

/** The log is rewritten once its removed lines take more than this and than an eighth of the live ones. */
export const REWRITE_MIN_DEAD_BYTES = 1024 * 1024;

/**
 * The append-only log of finished jobs, one JSON line each, fsynced per append. A torn last line
 * (a crash mid-append) is cut off at load so later appends start on a clean line. Removal
 * (retention) appends a tombstone line naming the jobs; once the lines no longer counted weigh
 * more than an eighth of the rest, the log is rewritten with the live lines alone, in the
 * background (appends wait only for the copy of what came meanwhile).
 */
export class FinishedLog {
  readonly #path: string;
  readonly #log: AppendLog;
  /** The jobs the log holds, in the order they were appended: the oldest finished first. */
  readonly #live = new Map<string, FinishedRecord>();
  #liveBytes = 0;
  #rewriting: Promise<void> | null = null;
  readonly #rewriteAtDeadBytes: number;
  /** The jobs the tombstones read at load removed: gone for good, whatever another file still says of them. */
  #removedAtLoad = new Set<string>();

  constructor(path: string, rewriteAtDeadBytes = REWRITE_MIN_DEAD_BYTES) {
    this.#path = path;
    this.#log = new AppendLog(path);
    this.#rewriteAtDeadBytes = rewriteAtDeadBytes;
  }

  /** The jobs removed by the tombstones read at load (once: the set is let go). */
  takeRemovedAtLoad(): Set<string> {
    const removed = this.#removedAtLoad;
    this.#removedAtLoad = new Set();
    return removed;
  }

  async load(notices: StoreNotice[]): Promise<FinishedRecord[]> {
    const text = await this.#log.open();
    const lines = text.split('\n');
    const torn = lines.pop() ?? '';
    lines.forEach((line, index) => {
      if (line === '') return;
      if (!this.#loadLine(line)) notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: `unreadable line ${index + 1} skipped`, path: this.#path });
    });
    if (torn !== '') {
      // The last line had no newline: only a line that parses completely counts.
      if (parses(torn) && this.#loadLine(torn)) {
        await this.#log.append('\n');
      } else {
        notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: 'a torn last line was cut off', path: this.#path });
        await this.#log.cut(Buffer.byteLength(text) - Buffer.byteLength(torn));
      }
    }
    return [...this.#live.values()];
  }

  /** Takes in one stored line; false when it is neither a finished job nor a tombstone. */
  #loadLine(line: string): boolean {
    if (line.startsWith(TOMBSTONE_HEAD)) {
      const tombstone = readTombstone(line);
      if (tombstone === null) return false;
      this.#forget(tombstone.removed);
      for (const id of tombstone.removed) this.#removedAtLoad.add(id);
      return true;
    }
    const record = readFinishedLine(line);
    if (record === null) return false;
    this.#removedAtLoad.delete(record.job_id);
    this.#keep(record);
    return true;
  }

  #keep(record: FinishedRecord): void {
    this.#drop(record.job_id);
    this.#live.set(record.job_id, record);
    this.#liveBytes += Buffer.byteLength(record.line) + 1;
  }

  #forget(jobIds: readonly string[]): void {
    for (const id of jobIds) this.#drop(id);
  }

  #drop(jobId: string): void {
    const gone = this.#live.get(jobId);
    if (gone === undefined) return;
    this.#live.delete(jobId);
    this.#liveBytes -= Buffer.byteLength(gone.line) + 1;
  }

  /** Appends one finished job; resolves with its record once it is on disk. */
  async append(job: Job): Promise<FinishedRecord> {
    const record = recordOf(job, encodeFinishedJob(job));
    await this.#log.append(`${record.line}\n`, () => this.#keep(record));
    return record;
  }

  /** The jobs the log holds, oldest finished first. */
  records(): IterableIterator<FinishedRecord> {
    return this.#live.values();
  }

  /** Removes jobs: durable once this resolves. The log is rewritten in the background once enough of it is dead. */
  async remove(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length === 0) return;
    const tombstone: Tombstone = { removed: [...jobIds] };
    await this.#log.append(`${JSON.stringify(tombstone)}\n`, () => this.#forget(jobIds));
    const dead = this.#log.size - this.#liveBytes;
    if (this.#rewriting === null && dead > this.#rewriteAtDeadBytes && dead > this.#liveBytes / 8) {
      this.#rewriting = this.rewrite().finally(() => {
        this.#rewriting = null;
      });
      // A rewrite that fails (a full disk) leaves the log as it was; the next removal tries again.
      this.#rewriting.catch(() => undefined);
    }
  }

  /** Rewrites the log with its live lines alone (lines an older daemon wrote get the current layout). */
  async rewrite(): Promise<void> {
    const from = this.#log.size;
    const records = [...this.#live.values()];
    await this.#log.rewrite(
      (function* lines() {
        for (const record of records) yield `${HEADER.test(record.line) ? record.line : encodeFinishedJob(JSON.parse(record.line) as Job)}\n`;
      })(),
      from,
    );
  }

  async close(): Promise<void> {
    await this.#rewriting?.catch(() => undefined);
    await this.#log.close();
  }
}

function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

function readTombstone(line: string): Tombstone | null {
  try {
    const value = JSON.parse(line) as Partial<Tombstone>;
    return Array.isArray(value.removed) && value.removed.every((id) => typeof id === 'string') ? { removed: value.removed } : null;
  } catch {
    return null;
  }
}
