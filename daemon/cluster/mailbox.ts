import { randomUUID } from 'node:crypto';
import { isErrorCode, SkilldError } from '../../rpc/errors.js';
import type { Clock, Timer } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import type { Pool } from '../store/pg/pool.js';
import { asStorageError } from '../store/storage-fault.js';
import type { HostLease } from './host-lease.js';

/** A request was left for a host: the payload is that host's id. */
export const REQUESTS_CHANNEL = 'skilld_requests';
/** A request was answered: the payload is its id. */
export const ANSWERS_CHANNEL = 'skilld_answers';

/** The requests one host carries out for another: those that change a job whose engine it runs, and reads of the logs in its run folder. */
export type RoutedMethod = 'jobs/cancel' | 'jobs/reply' | 'jobs/logs' | 'jobs/artifact';

/** How this host carries out a request another host left for it. */
export type Carry = (method: RoutedMethod, params: Record<string, unknown>) => Promise<unknown>;

type WireError = { code: string; message: string; details?: unknown };
type Answer = { result: unknown } | { error: WireError };

interface Waiter {
  host: string;
  jobId: string;
  method: RoutedMethod;
  sentAtMs: number;
  resolve(result: unknown): void;
  reject(error: SkilldError): void;
  looking: boolean;
  lookAgain: boolean;
}

/** Rows nobody reads any more (their sender stopped while it waited) are deleted after this long. */
const KEEP_MS = 3_600_000;

/**
 * Requests between the hosts of a shared store, kept in the database. A host that gets a request
 * for a job another host holds leaves it in `skilld.requests` and waits; the holder takes it
 * (announced on REQUESTS_CHANNEL, and looked for every third of a lease in case an announcement
 * was missed), carries it out as if it had been asked itself, and stores the answer — only then,
 * once what the request changed is stored, is the sender answered. A request the holder did not
 * take within a lease is withdrawn (deleted), so that it can never be carried out after its
 * sender gave up.
 */
export class Mailbox {
  readonly #pool: Pool;
  readonly #lease: HostLease;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #waiters = new Map<string, Waiter>();
  /** Answers carried out here whose storing failed: stored again on the next round. */
  readonly #unstored = new Map<string, Answer>();
  #carry: Carry | null = null;
  #draining: Promise<void> | null = null;
  #drainAgain = false;
  #timer: Timer | null = null;
  #lastSweepMs = 0;
  #stopped = false;

  constructor(pool: Pool, lease: HostLease, clock: Clock, logger: Logger) {
    this.#pool = pool;
    this.#lease = lease;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Starts carrying out requests left for this host, with `carry`, and looking after the ones this host sent. */
  start(carry: Carry): void {
    this.#carry = carry;
    this.#arm();
    void this.drain();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /**
   * Leaves `method` for `host`, which holds job `jobId`, and resolves with its answer, or rejects
   * with its error. JOB_OWNER_UNREACHABLE when the host is not running (nothing kept) or went away
   * while it carried the request out (`details.in_doubt`: it may have taken effect).
   */
  async send(host: string, jobId: string, method: RoutedMethod, params: Record<string, unknown>): Promise<unknown> {
    // Known before it is stored, and taken for being looked at until then: an answer can be
    // announced before the insert's own answer comes back.
    const id = randomUUID();
    let waiter!: Waiter;
    const answer = new Promise((resolve, reject) => {
      waiter = { host, jobId, method, sentAtMs: this.#clock.now().getTime(), resolve, reject, looking: true, lookAgain: false };
    });
    this.#waiters.set(id, waiter);
    const { rowCount } = await this.#pool.query(
      `WITH r AS (
         INSERT INTO skilld.requests (request_id, job_id, from_host, to_host, method, params)
         SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM skilld.hosts WHERE host_id = $4 AND state = 'live' AND lease_until > now())
         RETURNING to_host)
       SELECT pg_notify('${REQUESTS_CHANNEL}', to_host) FROM r`,
      [id, jobId, this.#lease.hostId, host, method, JSON.stringify(params)],
    ).catch((error: unknown) => {
      this.#waiters.delete(id);
      throw asStorageError(error, `the request for host "${host}"`);
    });
    if (rowCount !== 1) {
      this.#waiters.delete(id);
      throw unreachable(waiter, false);
    }
    this.#looked(id, waiter);
    return answer;
  }

  /** ANSWERS_CHANNEL: the request may be one of this host's. */
  answered(id: string): void {
    const waiter = this.#waiters.get(id);
    if (waiter !== undefined) this.#look(id, waiter);
  }

  /** After the announcements could not be heard for a while (a new connection): look at everything once. */
  caughtUp(): void {
    void this.drain();
    for (const [id, waiter] of this.#waiters) this.#look(id, waiter);
  }

  /** Carries out the requests left for this host, one at a time, in the order they were sent; resolves when the round in progress ends. */
  drain(): Promise<void> {
    if (this.#stopped || this.#carry === null) return Promise.resolve();
    if (this.#draining !== null) {
      this.#drainAgain = true;
      return this.#draining;
    }
    this.#draining = this.#drain()
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not take the requests other hosts left for this one; trying again'))
      .finally(() => {
        this.#draining = null;
        if (this.#drainAgain) {
          this.#drainAgain = false;
          void this.drain();
        }
      });
    return this.#draining;
  }

  async #drain(): Promise<void> {
    for (const [id, answer] of this.#unstored) await this.#store(id, answer);
    for (;;) {
      const { rows } = await this.#pool.query<{ id: string; method: RoutedMethod; params: Record<string, unknown> }>(
        `UPDATE skilld.requests SET state = 'taken' WHERE request_id = (
           SELECT request_id FROM skilld.requests WHERE to_host = $1 AND state = 'sent' ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING request_id AS id, method, params`,
        [this.#lease.hostId],
      );
      const request = rows[0];
      if (request === undefined || this.#carry === null) return;
      const answer = await this.#carry(request.method, request.params).then(
        (result): Answer => ({ result }),
        (error: unknown): Answer => ({ error: this.#wireError(error, request.method) }),
      );
      this.#unstored.set(request.id, answer);
      await this.#store(request.id, answer);
    }
  }

  async #store(id: string, answer: Answer): Promise<void> {
    await this.#pool.query(
      `WITH r AS (UPDATE skilld.requests SET state = 'answered', answer = $2 WHERE request_id = $1 RETURNING request_id)
       SELECT pg_notify('${ANSWERS_CHANNEL}', request_id) FROM r`,
      [id, JSON.stringify(answer)],
    );
    this.#unstored.delete(id);
  }

  #wireError(error: unknown, method: RoutedMethod): WireError {
    const known = asStorageError(error, 'the request');
    if (known instanceof SkilldError) return { code: known.code, message: known.message, ...(known.details === undefined ? {} : { details: known.details }) };
    this.#logger.error({ err: error, method }, 'a request another host left for this one failed');
    return { code: 'INTERNAL_ERROR', message: 'internal error' };
  }

  /** Looks at where a request this host sent stands; one look at a time per request, another after it when asked meanwhile. */
  #look(id: string, waiter: Waiter): void {
    if (waiter.looking) {
      waiter.lookAgain = true;
      return;
    }
    waiter.looking = true;
    void this.#check(id, waiter).finally(() => this.#looked(id, waiter));
  }

  #looked(id: string, waiter: Waiter): void {
    waiter.looking = false;
    if (waiter.lookAgain && this.#waiters.has(id)) {
      waiter.lookAgain = false;
      this.#look(id, waiter);
    }
  }

  /**
   * Answered: the answer is read and the request deleted, in one statement. Not taken within a
   * lease, or its host is gone: deleted, so that it can no longer be taken. Taken by a host that
   * is gone: in doubt.
   */
  async #check(id: string, waiter: Waiter): Promise<void> {
    const ttl = this.#lease.ttlMs;
    try {
      const { rows } = await this.#pool.query<{ state: string; answer: Answer | null; overdue: boolean; live: boolean }>(
        `WITH done AS (DELETE FROM skilld.requests WHERE request_id = $1 AND state = 'answered' RETURNING answer)
         SELECT r.state, (SELECT answer FROM done) AS answer, r.created_at < now() - $2 * interval '1 millisecond' AS overdue,
           EXISTS (SELECT 1 FROM skilld.hosts h WHERE h.host_id = r.to_host AND h.state = 'live' AND h.lease_until > now()) AS live
         FROM skilld.requests r WHERE request_id = $1`,
        [id, ttl],
      );
      const row = rows[0];
      if (row?.answer != null) return this.#settle(id, waiter, row.answer);
      if (row?.state === 'sent' && (row.overdue || !row.live)) {
        const { rowCount } = await this.#pool.query(`DELETE FROM skilld.requests WHERE request_id = $1 AND state = 'sent'`, [id]);
        if (rowCount === 1) return this.#fail(id, waiter, unreachable(waiter, false));
        return this.#check(id, waiter);
      }
      if (row === undefined || (row.state === 'taken' && !row.live)) {
        await this.#pool.query(`DELETE FROM skilld.requests WHERE request_id = $1`, [id]);
        return this.#fail(id, waiter, unreachable(waiter, true));
      }
    } catch (error) {
      this.#logger.warn({ err: error, request_id: id }, 'could not read the answer to a request left for another host; trying again');
    }
    if (this.#clock.now().getTime() - waiter.sentAtMs > 10 * ttl) this.#fail(id, waiter, unreachable(waiter, true));
  }

  #settle(id: string, waiter: Waiter, answer: Answer): void {
    if ('result' in answer) return this.#end(id, () => waiter.resolve(answer.result));
    const { code, message, details } = answer.error;
    this.#fail(id, waiter, new SkilldError(isErrorCode(code) ? code : 'INTERNAL_ERROR', message, details === undefined ? {} : { details }));
  }

  #fail(id: string, waiter: Waiter, error: SkilldError): void {
    this.#end(id, () => waiter.reject(error));
  }

  #end(id: string, tell: () => void): void {
    if (this.#waiters.delete(id)) tell();
  }

  /** Every third of a lease: requests whose announcement was missed, answers not yet stored or read, old rows. */
  #arm(): void {
    this.#timer = this.#clock.setTimer(this.#lease.ttlMs / 3, () => {
      if (this.#stopped) return;
      this.caughtUp();
      const nowMs = this.#clock.now().getTime();
      if (nowMs - this.#lastSweepMs > KEEP_MS / 4) {
        this.#lastSweepMs = nowMs;
        this.#pool.query(`DELETE FROM skilld.requests WHERE created_at < now() - $1 * interval '1 millisecond'`, [KEEP_MS]).catch(() => undefined);
      }
      this.#arm();
    });
  }
}

function unreachable({ host, jobId, method }: Waiter, inDoubt: boolean): SkilldError {
  if (method === 'jobs/logs') {
    // A read changes nothing: never in doubt.
    return new SkilldError('JOB_OWNER_UNREACHABLE', `host "${host}", where job ${jobId} ran and its logs are, is not running or did not answer`, { details: { host_id: host, in_doubt: false } });
  }
  const message = inDoubt
    ? `host "${host}", which holds job ${jobId}, went away while it carried out the request: it may or may not have taken effect; read the job before sending it again (a reply with the same idempotency_key is taken once)`
    : `host "${host}", which holds job ${jobId} (its workspace and engine), is not running or did not take the request; nothing of it was kept`;
  return new SkilldError('JOB_OWNER_UNREACHABLE', message, { details: { host_id: host, in_doubt: inDoubt } });
}
