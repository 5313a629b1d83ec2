import { open, readFile, type FileHandle } from 'node:fs/promises';
import type { Job } from '../jobs/job.js';
import type { StoreNotice } from './store.js';

/**
 * The append-only log of finished jobs, one JSON line each, fsynced per append. A torn last line
 * (a crash mid-append) is cut off at load so later appends start on a clean line.
 */
export class FinishedLog {
  readonly #path: string;
  #file: FileHandle | null = null;
  #tail: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.#path = path;
  }

  async load(notices: StoreNotice[]): Promise<Job[]> {
    const text = await readFile(this.#path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    const lines = text.split('\n');
    const torn = lines.pop() ?? '';
    const jobs: Job[] = [];
    lines.forEach((line, index) => {
      const job = parseJob(line);
      if (job !== null) jobs.push(job);
      else if (line !== '') notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: `unreadable line ${index + 1} skipped`, path: this.#path });
    });
    this.#file = await open(this.#path, 'a', 0o600);
    if (torn === '') return jobs;
    const last = parseJob(torn);
    if (last !== null) {
      jobs.push(last);
      await this.#file.appendFile('\n');
    } else {
      notices.push({ code: 'FINISHED_LOG_TRUNCATED', message: 'a torn last line was cut off', path: this.#path });
      await this.#file.truncate(Buffer.byteLength(text) - Buffer.byteLength(torn));
    }
    return jobs;
  }

  /** Appends one finished job; resolves once it is on disk. */
  append(job: Job): Promise<void> {
    const line = `${JSON.stringify(job)}\n`;
    const next = this.#tail.then(async () => {
      const file = this.#requireOpen();
      await file.appendFile(line, 'utf8');
      await file.datasync();
    });
    this.#tail = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.#tail;
    await this.#file?.close();
    this.#file = null;
  }

  #requireOpen(): FileHandle {
    if (this.#file === null) throw new Error('finished log is not open');
    return this.#file;
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
