import { AppendLog } from './append-log.js';
import type { Job } from '../jobs/job.js';
import type { StoreNotice } from './store.js';

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

  async load(notices: StoreNotice[]): Promise<Job[]> {
    const text = await this.#log.open();
    const lines = text.split('\n');
    const torn = lines.pop() ?? '';
    const jobs: Job[] = [];
    lines.forEach((line, index) => {
      const job = parseJob(line);
      if (job !== null) jobs.push(job);
      else if (line !== '') notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: `unreadable line ${index + 1} skipped`, path: this.#path });
    });
    if (torn === '') return jobs;
    const last = parseJob(torn);
    if (last !== null) {
      jobs.push(last);
      await this.#log.append('\n');
    } else {
      notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: 'a torn last line was cut off', path: this.#path });
      await this.#log.cut(Buffer.byteLength(text) - Buffer.byteLength(torn));
    }
    return jobs;
  }

  /** Appends one finished job; resolves once it is on disk. */
  append(job: Job): Promise<void> {
    return this.#log.append(`${JSON.stringify(job)}\n`);
  }

  close(): Promise<void> {
    return this.#log.close();
  }
}

function parseJob(line: string): Job | null {
  if (line === '') return null;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && typeof (value as Job).job_id === 'string' ? (value as Job) : null;
  } catch {
    return null;
  }
}
