import { stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../base/clock.js';
import { appendWhole } from './durable-file.js';
import { readEventPage } from './event-file.js';
import { cursorAfter, type EventCursor, type EventListener, type EventPage, type JobEventRecord, type JobEvents, type JobEventType } from '../model/events.js';

/**
 * Events of one job that could not be written (a full disk) wait in memory for the next write,
 * up to this many bytes; older ones are dropped past it, and a replay then shows the gap in `seq`.
 */
export const MAX_UNWRITTEN_EVENT_BYTES = 1024 * 1024;

/** How much of a log start-up holds at once while it finds a job's last event. */
const PRIME_PAGE_BYTES = 1024 * 1024;

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
 * tells live listeners at once. Reads come from the file, after pending appends have landed.
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

  /**
   * Picks up the numbering of a job whose log was written by an earlier daemon, reading it a page
   * at a time, and cuts off a line a crash left torn, so that the next append starts a line.
   */
  async prime(jobId: string, visit?: (event: JobEventRecord) => void): Promise<boolean> {
    let cursor = cursorAfter(0);
    for (let end = false; !end; ) {
      const page = await readEventPage(this.#path(jobId), cursor, PRIME_PAGE_BYTES);
      if (visit !== undefined) for (const event of page.events) visit(event);
      ({ cursor, end } = page);
    }
    this.#log(jobId).lastSeq = cursor.seq;
    const size = (await stat(this.#path(jobId)).catch(() => null))?.size ?? 0;
    if (size > cursor.at) await truncate(this.#path(jobId), cursor.at);
    return true;
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

  /** Every event is told to listeners as it is emitted: none is ever missed. */
  onMissed(): () => void {
    return () => undefined;
  }

  /** Reads the file once the appends in flight have landed; lines a failed write left in memory come after it. */
  async read(jobId: string, cursor: EventCursor, maxBytes: number): Promise<EventPage> {
    const log = this.#logs.get(jobId);
    await log?.tail;
    const page = await readEventPage(this.#path(jobId), cursor, maxBytes);
    if (!page.end || log === undefined || log.buffered.length === 0) return page;
    const unwritten = log.buffered.map((line) => JSON.parse(line) as JobEventRecord).filter((event) => event.seq > page.cursor.seq);
    // A write begun since the wait holds the events between: they are in the file at the next read.
    if (unwritten.length > 0 && unwritten[0]?.seq !== page.cursor.seq + 1) return { ...page, end: false };
    const events = [...page.events, ...unwritten];
    return { events, cursor: { seq: events[events.length - 1]?.seq ?? page.cursor.seq, at: page.cursor.at }, end: true };
  }

  /**
   * Forgets a finished job once its events are written (they stay readable from the file); one
   * last try for lines still unwritten. Until then a read waits for the writes as before.
   */
  async close(jobId: string): Promise<void> {
    const log = this.#logs.get(jobId);
    if (log === undefined) return;
    if (log.buffered.length > 0) this.#schedule(jobId, log);
    for (let tail = null as Promise<void> | null; tail !== log.tail; ) await (tail = log.tail);
    if (this.#logs.get(jobId) === log) this.#logs.delete(jobId);
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
