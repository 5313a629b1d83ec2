import { AppendLog } from './append-log.js';
import type { Job } from '../jobs/job.js';
import { TERMINAL_STATUSES, type JobStatus } from '../jobs/states.js';
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
  const { job_id, status, skill_id, created_at, ...rest } = job;
  return JSON.stringify({ job_id, status, skill_id, created_at, ...rest });
}

/** The job of a stored line. */
export function decodeFinishedLine(line: string, jobId: string): Job {
  try {
    return JSON.parse(line) as Job;
  } catch {
    throw new FinishedLineError(`the stored record of finished job ${jobId} is unreadable`);
  }
}

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const HEADER = new RegExp(String.raw`^\{"job_id":(${STRING}),"status":"([a-z_]+)","skill_id":(${STRING}),"created_at":(${STRING}),`);

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
    return { job_id: unquote(header[1] as string), status, skill_id: unquote(header[3] as string), created_at: unquote(header[4] as string), line };
  }
  let job: Partial<Job>;
  try {
    job = JSON.parse(line) as Partial<Job>;
  } catch {
    return null;
  }
  if (typeof job !== 'object' || job === null || typeof job.job_id !== 'string' || typeof job.skill_id !== 'string' || typeof job.created_at !== 'string') return null;
  if (job.status === undefined || !TERMINAL_STATUSES.has(job.status)) return null;
  return { job_id: job.job_id, status: job.status, skill_id: job.skill_id, created_at: job.created_at, line };
}

/**
 * The append-only log of finished jobs, one JSON line each, fsynced per append. A torn last line
 * (a crash mid-append) is cut off at load so later appends start on a clean line.
 */
export class FinishedLog {
  readonly #path: string;
  readonly #log: AppendLog;

  constructor(path: string) {
    this.#path = path;
    this.#log = new AppendLog(path);
  }

  async load(notices: StoreNotice[]): Promise<FinishedRecord[]> {
    const text = await this.#log.open();
    const lines = text.split('\n');
    const torn = lines.pop() ?? '';
    const records: FinishedRecord[] = [];
    lines.forEach((line, index) => {
      if (line === '') return;
      const record = readFinishedLine(line);
      if (record !== null) records.push(record);
      else notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: `unreadable line ${index + 1} skipped`, path: this.#path });
    });
    if (torn === '') return records;
    // The last line had no newline: only a line that parses completely counts.
    const last = tornLineRecord(torn);
    if (last !== null) {
      records.push(last);
      await this.#log.append('\n');
    } else {
      notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: 'a torn last line was cut off', path: this.#path });
      await this.#log.cut(Buffer.byteLength(text) - Buffer.byteLength(torn));
    }
    return records;
  }

  /** Appends one finished job; resolves with its record once it is on disk. */
  async append(job: Job): Promise<FinishedRecord> {
    const line = encodeFinishedJob(job);
    await this.#log.append(`${line}\n`);
    return { job_id: job.job_id, status: job.status, skill_id: job.skill_id, created_at: job.created_at, line };
  }

  close(): Promise<void> {
    return this.#log.close();
  }
}

function tornLineRecord(line: string): FinishedRecord | null {
  try {
    JSON.parse(line);
  } catch {
    return null;
  }
  return readFinishedLine(line);
}
