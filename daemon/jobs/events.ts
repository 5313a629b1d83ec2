import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { appendWhole } from '../store/durable-file.js';

/**
 * Events of one job that could not be written (a full disk) wait in memory for the next write,
 * up to this many bytes; older ones are dropped past it, and a replay then shows the gap in `seq`.
 */
export const MAX_UNWRITTEN_EVENT_BYTES = 1024 * 1024;

/** `output`: one line the engine printed, raw; `message`: one message of the agent, as text. */
export type JobEventType = 'status_changed' | 'input_required' | 'output' | 'message' | 'warning' | 'finished';

/** One `job/event` notification body (docs/protocol.md, "job/event"). `seq` increases per job without gaps. */
export interface JobEventRecord {
  job_id: string;
  seq: number;
  ts: string;
  type: JobEventType;
  data: unknown;
}

export type EventListener = (event: JobEventRecord) => void;

/**
 * Jobs' events as the supervisor and the subscriptions see them, whichever store keeps them:
 * numbered per job without gaps, told to live listeners, replayable.
 */
export interface JobEvents {
  /** Picks up the numbering of a job whose events were written by an earlier daemon. */
  prime(jobId: string): Promise<void>;
  emit(jobId: string, type: JobEventType, data: unknown): void;
  listen(listener: EventListener): () => void;
  /** Events of a job with `seq > afterSeq`, in order. */
  replay(jobId: string, afterSeq: number): Promise<JobEventRecord[]>;
  /** Forgets a finished job once its events are stored. */
  close(jobId: string): Promise<void>;
  closeAll(): Promise<void>;
}

interface JobLog {
  lastSeq: number;
  /** Lines not yet written; the next write takes them all. */
  buffered: string[];
  /** Whether a write is queued on `tail` that has not taken the buffered lines yet. */
  scheduled: boolean;
  tail: Promise<void>;
}

/**
 * Per-job event log: numbers events, appends them to `runs/<job>/events.ndjson` in order and
 * tells live listeners at once. Replays come from the file, after pending appends have landed.
 * No file stays open between writes, so thousands of waiting jobs cost no descriptors; events
 * that arrive while a write is in flight go out together in the next one.
 */
export class EventLog implements JobEvents {
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
    this.#schedule(jobId, log);
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  #schedule(jobId: string, log: JobLog): void {
    if (log.scheduled) return;
    log.scheduled = true;
    log.tail = log.tail.then(() => this.#write(jobId, log));
  }

  /** Writes what is buffered, whole lines or nothing; on failure the lines wait for the next write. */
  async #write(jobId: string, log: JobLog): Promise<void> {
    log.scheduled = false;
    const lines = log.buffered;
    log.buffered = [];
    try {
      await appendWhole(this.#path(jobId), lines.join(''), false);
    } catch {
      log.buffered = keepNewest([...lines, ...log.buffered], MAX_UNWRITTEN_EVENT_BYTES, (line) => Buffer.byteLength(line));
    }
  }

  listen(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Events of a job with `seq > afterSeq`, in order. */
  async replay(jobId: string, afterSeq: number): Promise<JobEventRecord[]> {
    const log = this.#logs.get(jobId);
    await log?.tail;
    // Lines a failed write left in memory come after everything in the file.
    const unwritten = (log?.buffered ?? []).map((line) => JSON.parse(line) as JobEventRecord);
    return [...(await this.#read(jobId)), ...unwritten].filter((event) => event.seq > afterSeq);
  }

  /** Forgets a finished job once its events are written (they stay replayable from the file); one last try for lines still unwritten. */
  async close(jobId: string): Promise<void> {
    const log = this.#logs.get(jobId);
    if (log === undefined) return;
    this.#logs.delete(jobId);
    if (log.buffered.length > 0) this.#schedule(jobId, log);
    await log.tail;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#logs.keys()].map((id) => this.close(id)));
  }

  #log(jobId: string): JobLog {
    let log = this.#logs.get(jobId);
    if (log === undefined) {
      log = { lastSeq: 0, buffered: [], scheduled: false, tail: Promise.resolve() };
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

/** The newest items whose total size (`sizeOf`, in bytes) stays within `maxBytes`. */
export function keepNewest<T>(items: T[], maxBytes: number, sizeOf: (item: T) => number): T[] {
  let bytes = 0;
  let first = items.length;
  while (first > 0) {
    bytes += sizeOf(items[first - 1] as T);
    if (bytes > maxBytes) break;
    first -= 1;
  }
  return items.slice(first);
}
