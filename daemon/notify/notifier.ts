import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../base/clock.js';
import { NOTIFY_EVENTS, type NotifyEvent, type NotifyHook } from '../base/config-notify.js';
import type { Logger } from '../base/logger.js';
import type { Pending } from '../model/gate.js';
import type { Job } from '../model/job.js';
import { retryDelayMs } from './backoff.js';
import type { AttemptRecord, Delivery, Outbox } from './outbox.js';
import { buildPayload, deliveryHeaders, hookKey, shownUrl } from './payload.js';
import { delivered, type Send } from './sender.js';

/** What a payload is made of, read when a job moves (main.ts reads them through the job queries). */
export interface JobLookup {
  job(jobId: string): Promise<Pick<Job, 'job_id' | 'skill_id' | 'owner'> | undefined>;
  /** The question of a waiting job, as `jobs/pending` gives it; null once it waits no more. */
  pending(jobId: string): Promise<Pending | null>;
}

export interface NotifierDeps {
  hooks: readonly NotifyHook[];
  /** A webhook's signing secret, read from the daemon's environment; never stored nor logged. */
  secret(hook: NotifyHook): string;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  lookup: JobLookup;
  send: Send;
  userAgent: string;
  random?: () => number;
  newId?: () => string;
}

/** How many attempts are in flight at once: a burst of jobs ending together queues behind them. */
export const MAX_IN_FLIGHT = 16;

/** The most attempts one `notify/log` answer holds. */
export const MAX_LOG_LIMIT = 200;

function isNotifyEvent(status: string): status is NotifyEvent {
  return (NOTIFY_EVENTS as readonly string[]).includes(status);
}

/**
 * Tells webhooks when a job waits or ends (docs/notify.md). It hears each move where it is made
 * (`moved`, synchronous, returns at once) and does everything else apart from the job: reads the
 * job, stores one delivery per webhook in the outbox, then sends it, and again after a failure
 * (a non-2xx answer, no answer) on a doubling backoff until the webhook's `retry_for` has passed.
 * Nothing a receiver does, however slow, holds a job up.
 */
export class Notifier {
  readonly #d: NotifierDeps;
  readonly #hooks = new Map<string, NotifyHook>();
  readonly #timers = new Map<string, Timer>();
  /** Deliveries due, waiting for a place among MAX_IN_FLIGHT. */
  #due: string[] = [];
  readonly #inFlight = new Map<string, AbortController>();
  /** Work under way (storing deliveries, attempts): `close` waits for it. */
  readonly #work = new Set<Promise<void>>();
  #closed = false;

  constructor(deps: NotifierDeps) {
    this.#d = deps;
    for (const hook of deps.hooks) this.#hooks.set(hookKey(hook.url), hook);
  }

  /** Picks up what the outbox still owes (from before a restart): each at its time, or now if that has passed. */
  start(): void {
    for (const delivery of this.#d.outbox.pending()) {
      if (this.#hooks.has(delivery.hook)) this.#schedule(delivery);
      else this.#track(this.#giveUp(delivery, 'its webhook is no longer in the config'));
    }
  }

  /** A job entered `to`; the webhooks that asked for it are told, apart from the job. */
  moved(jobId: string, to: string): void {
    if (this.#closed || !isNotifyEvent(to)) return;
    const hooks = this.#d.hooks.filter((hook) => hook.events.includes(to));
    if (hooks.length > 0) this.#track(this.#enqueue(jobId, to, this.#d.clock.now(), hooks));
  }

  /** `notify/log`: the last `limit` attempts, oldest first. */
  log(limit: number): { attempts: AttemptRecord[] } {
    return { attempts: this.#d.outbox.recent(Math.min(limit, MAX_LOG_LIMIT)) };
  }

  /**
   * Stops: no new attempt starts, and those in flight are dropped uncounted (the next start sends
   * them again, with the same delivery ids). Deliveries being stored are stored first.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers.values()) timer.cancel();
    this.#timers.clear();
    this.#due = [];
    for (const controller of this.#inFlight.values()) controller.abort();
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
    await this.#d.outbox.close();
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.#d.logger.error({ err: error }, 'notify: a delivery could not be stored or sent'));
    this.#work.add(tracked);
    void tracked.finally(() => this.#work.delete(tracked));
  }

  async #enqueue(jobId: string, event: NotifyEvent, at: Date, hooks: NotifyHook[]): Promise<void> {
    const job = await this.#d.lookup.job(jobId);
    if (job === undefined) return;
    const chosen = hooks.filter((hook) => hook.skills === null || hook.skills.includes(job.skill_id));
    if (chosen.length === 0) return;
    const pending = event === 'waiting_user' ? await this.#d.lookup.pending(jobId) : null;
    const body = JSON.stringify(buildPayload(event, at.toISOString(), job, pending));
    for (const hook of chosen) {
      const delivery: Delivery = {
        id: (this.#d.newId ?? randomUUID)(),
        hook: hookKey(hook.url),
        url: shownUrl(hook.url),
        event,
        job_id: jobId,
        body,
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + hook.retry_for_ms).toISOString(),
        attempts: 0,
        next_at: this.#d.clock.now().toISOString(),
      };
      await this.#d.outbox.add(delivery);
      this.#ready(delivery.id);
    }
  }

  #schedule(delivery: Pick<Delivery, 'id' | 'next_at'>): void {
    if (this.#closed) return;
    const wait = Date.parse(delivery.next_at) - this.#d.clock.now().getTime();
    if (wait <= 0) {
      this.#ready(delivery.id);
      return;
    }
    this.#timers.get(delivery.id)?.cancel();
    this.#timers.set(delivery.id, this.#d.clock.setTimer(wait, () => {
      this.#timers.delete(delivery.id);
      this.#ready(delivery.id);
    }));
  }

  #ready(id: string): void {
    if (this.#closed || this.#inFlight.has(id) || this.#due.includes(id)) return;
    this.#due.push(id);
    this.#pump();
  }

  #pump(): void {
    while (!this.#closed && this.#inFlight.size < MAX_IN_FLIGHT && this.#due.length > 0) {
      const id = this.#due.shift() as string;
      const delivery = this.#d.outbox.get(id);
      if (delivery === undefined) continue;
      const controller = new AbortController();
      this.#inFlight.set(id, controller);
      this.#track(this.#attempt(delivery, controller.signal).finally(() => {
        this.#inFlight.delete(id);
        this.#pump();
      }));
    }
  }

  async #attempt(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const hook = this.#hooks.get(delivery.hook);
    if (hook === undefined) return this.#giveUp(delivery, 'its webhook is no longer in the config');
    const attempt = delivery.attempts + 1;
    const at = this.#d.clock.now().toISOString();
    const headers = deliveryHeaders(delivery, this.#d.secret(hook), this.#d.userAgent);
    const outcome = await this.#d.send({ url: hook.url, body: delivery.body, headers }, signal);
    // The daemon stops: the attempt is not counted, and the next start sends the delivery again.
    if (signal.aborted) return;
    const ok = delivered(outcome);
    const retryAt = this.#d.clock.now().getTime() + retryDelayMs(attempt, this.#d.random);
    const next = ok || retryAt > Date.parse(delivery.expires_at) ? null : new Date(retryAt).toISOString();
    const record: AttemptRecord = {
      delivery_id: delivery.id, url: delivery.url, event: delivery.event, job_id: delivery.job_id, attempt, at,
      status: outcome.status, error: outcome.error, next_at: next, outcome: ok ? 'delivered' : next === null ? 'given_up' : 'retrying',
    };
    // Unstored (a full disk), the delivery stays owed as it was: retried here all the same, and sent again after a restart.
    await this.#store(record).catch((error: unknown) => this.#d.logger.error({ err: error, delivery_id: delivery.id }, 'notify: an attempt could not be stored'));
    if (next !== null) this.#schedule({ id: delivery.id, next_at: next });
  }

  /** A delivery whose webhook left the config: nothing to send it to, nor a secret to sign it with. */
  async #giveUp(delivery: Delivery, reason: string): Promise<void> {
    const record: AttemptRecord = {
      delivery_id: delivery.id, url: delivery.url, event: delivery.event, job_id: delivery.job_id, attempt: delivery.attempts,
      at: this.#d.clock.now().toISOString(), status: null, error: reason, next_at: null, outcome: 'given_up',
    };
    await this.#store(record);
  }

  /** Stores the attempt, then logs it (whether it could be stored or not): a logged attempt is on disk if it could be. */
  async #store(record: AttemptRecord): Promise<void> {
    try {
      await this.#d.outbox.record(record);
    } finally {
      this.#d.logger[record.outcome === 'delivered' ? 'info' : 'warn']({ ...record }, 'notify attempt');
    }
  }
}
