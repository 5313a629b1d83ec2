import { randomBytes } from 'node:crypto';
import { SkilldError } from '../rpc/errors.js';
import type { Clock } from './base/clock.js';
import { Follower, type EventOutlet } from './event-follower.js';
import type { Logger } from './base/logger.js';
import type { JobEventRecord, JobEvents } from './model/events.js';

interface Subscription {
  id: string;
  conn: EventOutlet;
  jobId: string | null;
  /** One per job whose events the subscription has sent or is sending. */
  followers: Map<string, Follower>;
  /** Lets the connection count as idle again. */
  release: () => void;
  /** Of every job, whether the subscriber may see this one (docs/access.md); absent: every job. */
  sees?: (jobId: string) => Promise<boolean>;
  /** Jobs looked up with `sees`: true to follow, false to leave out, a promise while it is asked. */
  judged: Map<string, boolean | Promise<boolean>>;
}

/**
 * `jobs/subscribe`: `job/event` notifications of one job (optionally after a replay from
 * `after_seq`) or of every job, each event once, in order and without gaps, read from the store
 * where the live stream cannot give them (see `Follower`).
 */
export class Subscriptions {
  readonly #events: JobEvents;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #subs = new Map<string, Subscription>();
  /** Connections that asked for `skills/changed` alone (`skills/subscribe`). */
  readonly #skillWatchers = new Set<EventOutlet>();

  constructor(events: JobEvents, clock: Clock, logger: Logger) {
    this.#events = events;
    this.#clock = clock;
    this.#logger = logger;
    events.listen((event) => {
      for (const sub of this.#subs.values()) this.#deliver(sub, event);
    });
    events.onMissed(() => {
      for (const sub of this.#subs.values()) for (const follower of sub.followers.values()) follower.catchUp();
    });
  }

  /** `sees`: for a subscription to every job, which jobs it may be told of (the caller's, docs/access.md). */
  subscribe(conn: EventOutlet, params: { job_id?: string; after_seq?: number }, sees?: (jobId: string) => Promise<boolean>): { subscription_id: string } {
    if (params.after_seq !== undefined && params.job_id === undefined) {
      throw new SkilldError('INVALID_PARAMS', 'after_seq needs job_id: replay is per job');
    }
    const id = `sub-${randomBytes(6).toString('hex')}`;
    // A connection that waits for events has something to do: it is not closed as idle.
    const sub: Subscription = { id, conn, jobId: params.job_id ?? null, followers: new Map(), release: conn.hold(), judged: new Map(), ...(sees === undefined || params.job_id !== undefined ? {} : { sees }) };
    this.#subs.set(id, sub);
    conn.onClose(() => this.#drop(sub));
    if (params.job_id !== undefined && params.after_seq !== undefined) {
      const follower = this.#follow(sub, params.job_id, params.after_seq, true);
      // After this request's answer has been written: the replay's events come after it.
      setImmediate(() => follower.startReplay());
    }
    return { subscription_id: id };
  }

  unsubscribe(conn: EventOutlet, subscriptionId: string): { ok: true } {
    const sub = this.#subs.get(subscriptionId);
    if (sub === undefined || sub.conn !== conn) throw new SkilldError('INVALID_PARAMS', `no subscription "${subscriptionId}" on this connection`);
    this.#drop(sub);
    return { ok: true };
  }

  /** `skills/subscribe`: `skills/changed` for this connection from now on, without any job's events. */
  watchSkills(conn: EventOutlet): { ok: true } {
    if (!this.#skillWatchers.has(conn)) {
      this.#skillWatchers.add(conn);
      const release = conn.hold();
      conn.onClose(() => {
        this.#skillWatchers.delete(conn);
        release();
      });
    }
    return { ok: true };
  }

  /** Whether a subscription here wants the job's events (one of that job, or of all jobs). */
  follows(jobId: string): boolean {
    for (const sub of this.#subs.values()) if (sub.jobId === null || sub.jobId === jobId) return true;
    return false;
  }

  /** Connections that hold at least one subscription, or asked for skills alone: they get `skills/changed`. */
  subscribedConnections(): Set<EventOutlet> {
    return new Set([...[...this.#subs.values()].map((sub) => sub.conn), ...this.#skillWatchers]);
  }

  /**
   * A live event: to the job's follower, made for it on its first event (from that event on). Where
   * the subscriber may see only some jobs, a job is asked about at its first event; its follower,
   * once allowed, reads what came meanwhile from the store, from that first event on.
   */
  #deliver(sub: Subscription, event: JobEventRecord): void {
    if (sub.jobId !== null && sub.jobId !== event.job_id) return;
    const follower = sub.followers.get(event.job_id);
    if (follower !== undefined) return follower.offer(event);
    if (sub.sees === undefined) return this.#follow(sub, event.job_id, event.seq - 1).offer(event);
    const judged = sub.judged.get(event.job_id);
    if (judged === true) return this.#follow(sub, event.job_id, event.seq - 1).offer(event);
    if (judged === false && event.type === 'finished') sub.judged.delete(event.job_id);
    if (judged !== undefined) return;
    const asking = sub.sees(event.job_id).catch(() => false);
    sub.judged.set(event.job_id, asking);
    void asking.then((allowed) => {
      if (!this.#subs.has(sub.id)) return;
      sub.judged.set(event.job_id, allowed);
      if (allowed && !sub.followers.has(event.job_id)) this.#follow(sub, event.job_id, event.seq - 1).catchUp();
    });
  }

  #follow(sub: Subscription, jobId: string, afterSeq: number, replay = false): Follower {
    const follower = new Follower(jobId, afterSeq, {
      events: this.#events,
      conn: sub.conn,
      clock: this.#clock,
      // A subscription to every job keeps no follower for a job that has finished.
      onSent: (event) => {
        if (sub.jobId === null && event.type === 'finished') {
          follower.stop();
          sub.followers.delete(jobId);
          sub.judged.delete(jobId);
        }
      },
      onReadFailed: (error) => this.#logger.warn({ err: error, job_id: jobId, subscription_id: sub.id }, 'could not read a job\'s events for a subscriber; trying again'),
    }, replay);
    sub.followers.set(jobId, follower);
    return follower;
  }

  #drop(sub: Subscription): void {
    this.#subs.delete(sub.id);
    sub.release();
    for (const follower of sub.followers.values()) follower.stop();
    sub.followers.clear();
    sub.judged.clear();
  }
}
