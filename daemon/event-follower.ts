import type { Connection } from '../rpc/connection.js';
import type { Clock, Timer } from './base/clock.js';
import { cursorAfter, type EventCursor, type JobEventRecord, type JobEvents } from './model/events.js';

/** Bytes of events one read of the store gives a follower; it reads the next page once the client has taken this one. */
export const FOLLOW_PAGE_BYTES = 256 * 1024;
/**
 * A connection with more than this written and not yet taken gets no live events: its followers
 * read them from the store once the client catches up, so a slow reader costs no memory.
 */
export const LIVE_BACKLOG_BYTES = 1024 * 1024;
/** How long a follower waits after a store it could not read before it tries again. */
const RETRY_MS = 1000;

/** What a follower needs of a client connection. */
export type EventOutlet = Pick<Connection, 'backlog' | 'drained' | 'closed' | 'run' | 'notify' | 'onClose' | 'hold'>;

export interface FollowerDeps {
  events: JobEvents;
  conn: EventOutlet;
  clock: Clock;
  /** Told of each event sent, after it was written. */
  onSent?: (event: JobEventRecord) => void;
  /** A read of the store failed; the follower tries again later. */
  onReadFailed(error: unknown): void;
}

/**
 * Sends one job's events to one connection, each once, in order, without gaps: live events while
 * it is up to date, and from the store, a page at a time as the client takes them, whenever it is
 * behind — when it starts with a replay, when a live event comes past a gap (another host's
 * events not heard yet, or announcements missed), or when the client reads slower than the job
 * writes. Reading counts as a request in flight of its connection and stops when it closes.
 */
export class Follower {
  readonly jobId: string;
  readonly #d: FollowerDeps;
  #cursor: EventCursor;
  /** The highest seq seen live: the store is read until the cursor reaches it, or shows it never will. */
  #highest: number;
  #reading = false;
  #stopped = false;
  #retry: Timer | null = null;

  /** With `replay`, live events wait (in the store) until `startReplay` has sent what came before them. */
  constructor(jobId: string, afterSeq: number, deps: FollowerDeps, replay = false) {
    this.jobId = jobId;
    this.#d = deps;
    this.#cursor = cursorAfter(afterSeq);
    this.#highest = afterSeq;
    this.#reading = replay;
  }

  /** Sends the stored events after `afterSeq` (a follower made with `replay`), then goes on live. */
  startReplay(): void {
    this.#read();
  }

  /** A live event of the job: sent at once when it is the next one and the client keeps up; else read from the store. */
  offer(event: JobEventRecord): void {
    if (this.#stopped || event.seq <= this.#cursor.seq) return;
    if (!this.#reading && event.seq === this.#cursor.seq + 1 && this.#d.conn.backlog <= LIVE_BACKLOG_BYTES) {
      this.#send(event);
      return;
    }
    this.#highest = Math.max(this.#highest, event.seq);
    this.catchUp();
  }

  /** Reads the store from where the follower stands to its end, then goes on live. */
  catchUp(): void {
    if (this.#reading) return;
    this.#reading = true;
    this.#read();
  }

  #read(): void {
    if (this.#stopped) {
      this.#reading = false;
      return;
    }
    this.#d.conn.run(() => this.#readToEnd()).catch((error: unknown) => {
      this.#reading = false;
      if (this.#stopped) return;
      this.#d.onReadFailed(error);
      this.#retry ??= this.#d.clock.setTimer(RETRY_MS, () => {
        this.#retry = null;
        this.catchUp();
      });
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#retry?.cancel();
    this.#retry = null;
  }

  async #readToEnd(): Promise<void> {
    for (;;) {
      await this.#d.conn.drained();
      if (this.#stopped || this.#d.conn.closed) break;
      // Every event seen live before a read is in the store by the time it reads.
      const seen = this.#highest;
      const page = await this.#d.events.read(this.jobId, this.#cursor, FOLLOW_PAGE_BYTES);
      if (this.#stopped) break;
      for (const event of page.events) if (event.seq > this.#cursor.seq) this.#send(event);
      this.#cursor = { seq: this.#cursor.seq, at: page.cursor.at };
      // Done at the end of what is stored, unless an event seen live during the read may have
      // come too late for it. One seen before the read and still missing is not in the store at
      // all (a full disk made the files store drop it): the seq shows the gap.
      if (page.end && (this.#highest <= this.#cursor.seq || this.#highest === seen)) break;
    }
    // In the same turn as the last check: a live event from now on is sent, or starts a new read.
    this.#reading = false;
  }

  #send(event: JobEventRecord): void {
    this.#cursor = { seq: event.seq, at: this.#cursor.at };
    this.#d.conn.notify('job/event', event);
    this.#d.onSent?.(event);
  }
}
