import type { Clock, Timer } from '../../base/clock.js';
import { keepNewest, MAX_UNWRITTEN_EVENT_BYTES } from '../event-log.js';
import { CommitInDoubtError, inTransaction, type Pool } from './pool.js';
import { cursorAfter, type EventCursor, type EventListener, type EventPage, type JobEventRecord, type JobEvents, type JobEventType } from '../../model/events.js';

/** An event waiting to be stored: it gets its number when it is. */
interface Unstored {
  ts: string;
  type: JobEventType;
  /** The data as JSON text. */
  data: string;
}

interface JobQueue {
  buffered: Unstored[];
  /** A batch whose commit lost its connection: read back before anything else is stored, so that it is never stored twice. */
  doubt: Unstored[] | null;
  scheduled: boolean;
  tail: Promise<void>;
  /** The job is finished: the queue goes once nothing is left to store. */
  closed: boolean;
}

/** What listeners here have heard of a followed job. */
interface Heard {
  seq: number;
  fetching: Promise<void>;
  /** Its `finished` event was heard: nothing comes after it. */
  ended: boolean;
}

/** How many ended jobs are remembered: an announcement comes within moments of its batch. */
const ENDED_REMEMBERED = 1024;

/** The channel stored events are announced on. */
export const EVENTS_CHANNEL = 'skilld_events';

/** How long events wait before another try when the database did not take them. */
const RETRY_MS = 1000;
/** The most events one page holds, whatever their size. */
const PAGE_ROWS = 1000;
/** How much of another host's events a fetch holds at once. */
const FETCH_PAGE_BYTES = 256 * 1024;

/**
 * A page of a job's events: the rows after a seq, in order, up to $4 of them and until they hold
 * $3 bytes (the first row always). One row more is read, without its data, to tell whether the
 * page is the end; so is each row past the byte limit.
 */
const PAGE_SQL = `
  SELECT seq, ts, type, CASE WHEN kept THEN data END AS data, kept FROM (
    SELECT seq, ts, type, data,
      row_number() OVER w <= $4 AND coalesce(sum(octet_length(data::text)) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) < $3 AS kept
    FROM skilld.events WHERE job_id = $1 AND seq > $2
    WINDOW w AS (ORDER BY seq) ORDER BY seq LIMIT $4::integer + 1
  ) page ORDER BY seq`;

/**
 * Jobs' events in PostgreSQL. An event is numbered when it is stored, by its job's row, in the
 * transaction that stores it: numbers have no gaps whichever daemon writes, and a write that
 * fails leaves no number behind. Listeners hear an event once it is stored; events emitted while
 * a write is in flight go together in the next one, and events the database did not take wait in
 * memory (up to MAX_UNWRITTEN_EVENT_BYTES per job) for another try.
 */
export class PgEvents implements JobEvents {
  readonly #pool: Pool;
  readonly #clock: Clock;
  readonly #queues = new Map<string, JobQueue>();
  readonly #listeners = new Set<EventListener>();
  readonly #missed = new Set<() => void>();
  /** Announcements of batches this host is storing or stored, not heard back yet. */
  readonly #announced = new Set<string>();
  /** Per job followed here: the last event listeners heard, and the fetch of other hosts' events in flight. */
  readonly #heard = new Map<string, Heard>();
  /** Followed jobs whose last event was heard, oldest first: kept a while, so that a late announcement repeats nothing. */
  readonly #ended: string[] = [];
  #follows: (jobId: string) => boolean = () => false;
  #retry: Timer | null = null;

  constructor(pool: Pool, clock: Clock) {
    this.#pool = pool;
    this.#clock = clock;
  }

  /** Numbers come from the store: nothing to pick up, nothing read. */
  prime(): Promise<boolean> {
    return Promise.resolve(false);
  }

  emit(jobId: string, type: JobEventType, data: unknown): void {
    const queue = this.#queue(jobId);
    queue.buffered.push({ ts: this.#clock.now().toISOString(), type, data: JSON.stringify(data ?? null) });
    this.#schedule(jobId, queue);
  }

  listen(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onMissed(handler: () => void): () => void {
    this.#missed.add(handler);
    return () => this.#missed.delete(handler);
  }

  /** Which jobs this daemon's subscribers follow: only their events are fetched when another host stores some. */
  follow(follows: (jobId: string) => boolean): void {
    this.#follows = follows;
  }

  /**
   * A host (this one too) stored events of a job, up to `seq` (the `skilld_events` notification,
   * `<job_id>:<seq>`): listeners hear those they have not heard yet, in order.
   */
  heard(payload: string): void {
    const at = payload.lastIndexOf(':');
    const jobId = payload.slice(0, at);
    const seq = Number(payload.slice(at + 1));
    // A batch this host stored is heard as it is stored, whole and in order. Its announcement may
    // come before the commit returns (a fetch from it would skip the batch's first events) or
    // after the job's last event was heard (a fetch would hear that event twice): passed over.
    if (this.#announced.delete(payload) || !this.#follows(jobId) || !Number.isInteger(seq)) return;
    const known = this.#heard.get(jobId);
    if (known === undefined) this.#fetch(jobId, seq - 1);
    else if (seq > known.seq) this.#fetch(jobId, known.seq);
  }

  /**
   * After notifications went unheard (a reconnection): every followed job is read again from what
   * was heard, and whoever follows jobs here is told to read again from where it stands.
   */
  catchUp(): void {
    for (const [jobId, known] of this.#heard) if (!known.ended) this.#fetch(jobId, known.seq);
    for (const handler of this.#missed) handler();
  }

  /**
   * Reads the job's stored events after the last heard (`afterSeq` for a job not heard before) and
   * hears them, a page at a time, one fetch at a time per job.
   */
  #fetch(jobId: string, afterSeq: number): void {
    let known = this.#heard.get(jobId);
    if (known === undefined) {
      known = { seq: afterSeq, fetching: Promise.resolve(), ended: false };
      this.#heard.set(jobId, known);
    }
    const entry = known;
    entry.fetching = entry.fetching.then(async () => {
      for (let end = false; !end; ) {
        const before = entry.seq;
        const page = await this.read(jobId, cursorAfter(before), FETCH_PAGE_BYTES).catch(() => null);
        if (page === null) return;
        for (const event of page.events) this.#hear(event);
        end = page.end || entry.seq === before;
      }
    });
  }

  /**
   * Listeners hear a followed job's events in order, each once: an event past a gap (another
   * host's events not heard yet) is read back from the store with the ones before it.
   */
  #hear(event: JobEventRecord): void {
    let known = this.#heard.get(event.job_id);
    if (known === undefined && this.#follows(event.job_id)) {
      known = { seq: event.seq - 1, fetching: Promise.resolve(), ended: false };
      this.#heard.set(event.job_id, known);
    }
    if (known !== undefined) {
      if (event.seq <= known.seq) return;
      if (event.seq > known.seq + 1) {
        this.#fetch(event.job_id, known.seq);
        return;
      }
      known.seq = event.seq;
      if (event.type === 'finished') this.#end(event.job_id, known);
    }
    for (const listener of this.#listeners) listener(event);
  }

  /** Remembers that a job's last event was heard, and forgets the oldest such job past ENDED_REMEMBERED. */
  #end(jobId: string, known: Heard): void {
    known.ended = true;
    this.#ended.push(jobId);
    if (this.#ended.length > ENDED_REMEMBERED) this.#heard.delete(this.#ended.shift() as string);
  }

  /** Reads once this host's batches of the job in flight are stored. */
  async read(jobId: string, cursor: EventCursor, maxBytes: number): Promise<EventPage> {
    await this.#queues.get(jobId)?.tail;
    const { rows } = await this.#pool.query<{ seq: number; ts: string; type: JobEventType; data: unknown; kept: boolean }>(PAGE_SQL, [jobId, cursor.seq, maxBytes, PAGE_ROWS]);
    const events: JobEventRecord[] = [];
    for (const { kept, ...row } of rows) if (kept) events.push({ job_id: jobId, ...row });
    const last = events[events.length - 1]?.seq ?? cursor.seq;
    return { events, cursor: { seq: last, at: 0 }, end: events.length === rows.length && rows.length <= PAGE_ROWS };
  }

  /** Forgets a finished job once its events are stored; events the database did not take yet are kept for the next try. */
  async close(jobId: string): Promise<void> {
    const queue = this.#queues.get(jobId);
    if (queue === undefined) return;
    queue.closed = true;
    if (queue.buffered.length > 0 || queue.doubt !== null) this.#schedule(jobId, queue);
    await queue.tail;
    this.#forgetIfDone(jobId, queue);
  }

  async closeAll(): Promise<void> {
    this.#retry?.cancel();
    this.#retry = null;
    await Promise.all([...this.#queues.keys()].map((id) => this.close(id)));
  }

  #queue(jobId: string): JobQueue {
    let queue = this.#queues.get(jobId);
    if (queue === undefined) {
      queue = { buffered: [], doubt: null, scheduled: false, tail: Promise.resolve(), closed: false };
      this.#queues.set(jobId, queue);
    }
    return queue;
  }

  #schedule(jobId: string, queue: JobQueue): void {
    if (queue.scheduled) return;
    queue.scheduled = true;
    queue.tail = queue.tail.then(() => this.#write(jobId, queue));
  }

  async #write(jobId: string, queue: JobQueue): Promise<void> {
    queue.scheduled = false;
    if (queue.doubt !== null && !(await this.#settleDoubt(jobId, queue))) return;
    const batch = queue.buffered;
    queue.buffered = [];
    if (batch.length === 0) return this.#forgetIfDone(jobId, queue);
    let stored: JobEventRecord[];
    let announcement: string | null = null;
    try {
      stored = await inTransaction(this.#pool, (client) => storeBatch(client, jobId, batch, (payload) => this.#announced.add((announcement = payload))));
    } catch (error) {
      // A batch in doubt waits apart, to be read back (its announcement, if it was not kept, is
      // never heard: one string stays behind); any other was not announced and goes back first in line.
      if (error instanceof CommitInDoubtError) queue.doubt = batch;
      else {
        if (announcement !== null) this.#announced.delete(announcement);
        queue.buffered = [...batch, ...queue.buffered];
      }
      queue.buffered = keepNewest(queue.buffered, MAX_UNWRITTEN_EVENT_BYTES, unstoredSize);
      this.#retryLater();
      return;
    }
    for (const event of stored) this.#hear(event);
    this.#forgetIfDone(jobId, queue);
  }

  /**
   * Whether the batch in doubt was stored: it was when the job's last events are that batch
   * (only the job's holder stores its events, one batch at a time). Heard if so, put back first
   * in line if not; false when the database could not be read (another try later).
   */
  async #settleDoubt(jobId: string, queue: JobQueue): Promise<boolean> {
    const doubt = queue.doubt as Unstored[];
    let rows: Array<{ seq: number; ts: string; type: JobEventType; data: string }>;
    try {
      ({ rows } = await this.#pool.query<{ seq: number; ts: string; type: JobEventType; data: string }>(
        'SELECT seq, ts, type, data::text AS data FROM skilld.events WHERE job_id = $1 ORDER BY seq DESC LIMIT $2',
        [jobId, doubt.length],
      ));
    } catch {
      this.#retryLater();
      return false;
    }
    queue.doubt = null;
    const last = rows.reverse();
    const kept = last.length === doubt.length && last.every((row, i) => row.ts === doubt[i]?.ts && row.type === doubt[i]?.type && row.data === doubt[i]?.data);
    if (!kept) {
      queue.buffered = [...doubt, ...queue.buffered];
      return true;
    }
    for (const row of last) this.#hear({ job_id: jobId, seq: row.seq, ts: row.ts, type: row.type, data: JSON.parse(row.data) as unknown });
    return true;
  }

  #forgetIfDone(jobId: string, queue: JobQueue): void {
    if (queue.closed && queue.buffered.length === 0 && queue.doubt === null && !queue.scheduled && this.#queues.get(jobId) === queue) this.#queues.delete(jobId);
  }

  #retryLater(): void {
    if (this.#retry !== null) return;
    this.#retry = this.#clock.setTimer(RETRY_MS, () => {
      this.#retry = null;
      for (const [jobId, queue] of this.#queues) if (queue.buffered.length > 0 || queue.doubt !== null) this.#schedule(jobId, queue);
    });
  }
}

function unstoredSize(event: Unstored): number {
  return Buffer.byteLength(event.data) + event.ts.length + event.type.length;
}

/** Numbers the batch from the job's row and stores it; a job that is not stored takes no events. */
async function storeBatch(client: { query: Pool['query'] }, jobId: string, batch: readonly Unstored[], announce: (payload: string) => void): Promise<JobEventRecord[]> {
  const { rows } = await client.query<{ last_seq: number }>('UPDATE skilld.jobs SET last_seq = last_seq + $2 WHERE job_id = $1 RETURNING last_seq', [jobId, batch.length]);
  const last = rows[0]?.last_seq;
  if (last === undefined) return [];
  const first = last - batch.length + 1;
  const records = batch.map((event, i) => ({ job_id: jobId, seq: first + i, ts: event.ts, type: event.type, data: JSON.parse(event.data) as unknown }));
  // Delivered on commit to every host's listener (cluster/join.ts), which fetches what its subscribers follow.
  announce(`${jobId}:${last}`);
  await client.query(`SELECT pg_notify('${EVENTS_CHANNEL}', $1)`, [`${jobId}:${last}`]);
  await client.query('INSERT INTO skilld.events (job_id, seq, ts, type, data) SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::text[], $5::json[])', [
    jobId,
    records.map((r) => r.seq),
    batch.map((e) => e.ts),
    batch.map((e) => e.type),
    batch.map((e) => e.data),
  ]);
  return records;
}
