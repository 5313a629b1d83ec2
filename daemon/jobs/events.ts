import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';

export type JobEventType = 'status_changed' | 'input_required' | 'output' | 'warning' | 'finished';

/** One `job/event` notification body (SPEC §4). `seq` increases per job without gaps. */
export interface JobEventRecord {
  job_id: string;
  seq: number;
  ts: string;
  type: JobEventType;
  data: unknown;
}

export type EventListener = (event: JobEventRecord) => void;

interface JobLog {
  lastSeq: number;
  /** Lines not yet handed to a write; written together by the next write. */
  buffered: string[];
  tail: Promise<void>;
}

/**
 * Per-job event log: numbers events, appends them to `runs/<job>/events.ndjson` in order and
 * tells live listeners at once. Replays come from the file, after pending appends have landed.
 * No file stays open between writes, so thousands of waiting jobs cost no descriptors; events
 * that arrive while a write is in flight go out together in the next one.
 */
export class EventLog {
  readonly #runsDir: string;
  readonly #clock: Clock;
  readonly #logs = new Map<string, JobLog>();
  readonly #listeners = new Set<EventListener>();

  constructor(runsDir: string, clock: Clock) {
    this.#runsDir = runsDir;
    this.#clock = clock;
  }

  /** Picks up the numbering of a job whose log was written by an earlier daemon. */
  async prime(jobId: string): Promise<void> {
    const events = await this.#read(jobId);
    this.#log(jobId).lastSeq = events.length === 0 ? 0 : (events[events.length - 1] as JobEventRecord).seq;
  }

  emit(jobId: string, type: JobEventType, data: unknown): JobEventRecord {
    const log = this.#log(jobId);
    log.lastSeq += 1;
    const event: JobEventRecord = { job_id: jobId, seq: log.lastSeq, ts: this.#clock.now().toISOString(), type, data };
    log.buffered.push(`${JSON.stringify(event)}\n`);
    if (log.buffered.length === 1) {
      log.tail = log.tail
        .then(() => {
          const text = log.buffered.join('');
          log.buffered = [];
          return appendFile(this.#path(jobId), text, { encoding: 'utf8', mode: 0o600 });
        })
        .catch(() => undefined);
    }
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  listen(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Events of a job with `seq > afterSeq`, in order. */
  async replay(jobId: string, afterSeq: number): Promise<JobEventRecord[]> {
    await this.#logs.get(jobId)?.tail;
    return (await this.#read(jobId)).filter((event) => event.seq > afterSeq);
  }

  /** Forgets a finished job once its events are written (they stay replayable from the file). */
  async close(jobId: string): Promise<void> {
    const log = this.#logs.get(jobId);
    if (log === undefined) return;
    this.#logs.delete(jobId);
    await log.tail;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#logs.keys()].map((id) => this.close(id)));
  }

  #log(jobId: string): JobLog {
    let log = this.#logs.get(jobId);
    if (log === undefined) {
      log = { lastSeq: 0, buffered: [], tail: Promise.resolve() };
      this.#logs.set(jobId, log);
    }
    return log;
  }

  #path(jobId: string): string {
    return join(this.#runsDir, jobId, 'events.ndjson');
  }

  async #read(jobId: string): Promise<JobEventRecord[]> {
    const text = await readFile(this.#path(jobId), 'utf8').catch(() => '');
    const events: JobEventRecord[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        events.push(JSON.parse(line) as JobEventRecord);
      } catch {
        break; // a torn last line from a crash: the events before it are intact
      }
    }
    return events;
  }
}
