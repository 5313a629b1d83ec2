import { randomBytes } from 'node:crypto';
import { SkilldError } from '../rpc/errors.js';
import type { Connection } from '../rpc/connection.js';
import type { JobEventRecord, JobEvents } from './jobs/events.js';

interface Subscription {
  id: string;
  conn: Connection;
  jobId: string | null;
  /** Live events held back while the replay is being sent; null once live. */
  held: JobEventRecord[] | null;
  lastSent: Map<string, number>;
}

/**
 * `jobs/subscribe`: live `job/event` notifications, optionally preceded by a replay of one job's
 * log after `after_seq`. Events that arrive during the replay are held and sent after it, without
 * gaps or repeats.
 */
export class Subscriptions {
  readonly #events: JobEvents;
  readonly #subs = new Map<string, Subscription>();
  /** Connections that asked for `skills/changed` alone (`skills/subscribe`). */
  readonly #skillWatchers = new Set<Connection>();

  constructor(events: JobEvents) {
    this.#events = events;
    events.listen((event) => {
      for (const sub of this.#subs.values()) this.#deliver(sub, event);
    });
  }

  subscribe(conn: Connection, params: { job_id?: string; after_seq?: number }): { subscription_id: string } {
    if (params.after_seq !== undefined && params.job_id === undefined) {
      throw new SkilldError('INVALID_PARAMS', 'after_seq needs job_id: replay is per job');
    }
    const id = `sub-${randomBytes(6).toString('hex')}`;
    const replaying = params.job_id !== undefined && params.after_seq !== undefined;
    const sub: Subscription = { id, conn, jobId: params.job_id ?? null, held: replaying ? [] : null, lastSent: new Map() };
    this.#subs.set(id, sub);
    conn.onClose(() => this.#subs.delete(id));
    if (replaying) setImmediate(() => void this.#replay(sub, params.after_seq as number));
    return { subscription_id: id };
  }

  unsubscribe(conn: Connection, subscriptionId: string): { ok: true } {
    const sub = this.#subs.get(subscriptionId);
    if (sub === undefined || sub.conn !== conn) throw new SkilldError('INVALID_PARAMS', `no subscription "${subscriptionId}" on this connection`);
    this.#subs.delete(subscriptionId);
    return { ok: true };
  }

  /** `skills/subscribe`: `skills/changed` for this connection from now on, without any job's events. */
  watchSkills(conn: Connection): { ok: true } {
    if (!this.#skillWatchers.has(conn)) {
      this.#skillWatchers.add(conn);
      conn.onClose(() => this.#skillWatchers.delete(conn));
    }
    return { ok: true };
  }

  /** Whether a subscription here wants the job's events (one of that job, or of all jobs). */
  follows(jobId: string): boolean {
    for (const sub of this.#subs.values()) if (sub.jobId === null || sub.jobId === jobId) return true;
    return false;
  }

  /** Connections that hold at least one subscription, or asked for skills alone: they get `skills/changed`. */
  subscribedConnections(): Set<Connection> {
    return new Set([...[...this.#subs.values()].map((sub) => sub.conn), ...this.#skillWatchers]);
  }

  async #replay(sub: Subscription, afterSeq: number): Promise<void> {
    const jobId = sub.jobId as string;
    sub.lastSent.set(jobId, afterSeq);
    for (const event of await this.#events.replay(jobId, afterSeq)) this.#send(sub, event);
    const held = sub.held ?? [];
    sub.held = null;
    for (const event of held) this.#send(sub, event);
  }

  #deliver(sub: Subscription, event: JobEventRecord): void {
    if (sub.jobId !== null && sub.jobId !== event.job_id) return;
    if (sub.held !== null) sub.held.push(event);
    else this.#send(sub, event);
  }

  #send(sub: Subscription, event: JobEventRecord): void {
    if (event.seq <= (sub.lastSent.get(event.job_id) ?? 0)) return;
    sub.lastSent.set(event.job_id, event.seq);
    sub.conn.notify('job/event', event);
  }
}
