import type { RpcClient } from '../../rpc/client.js';
import { nowMs } from './util.js';

/** One `job/event` notification as received, with the receipt time (epoch ms, sub-ms resolution). */
export interface SeenEvent {
  job_id: string;
  seq: number;
  /** The daemon's own time of the event (ISO, ms). */
  ts: string;
  type: string;
  data: Record<string, unknown> | null;
  at: number;
}

interface Waiter {
  pred(event: SeenEvent): boolean;
  resolve(event: SeenEvent): void;
}

const TERMINAL = ['succeeded', 'failed', 'canceled'];

/**
 * A connection subscribed to every job's events (`jobs/subscribe {}`). Events are kept per job
 * (except `output`, of which only the first one's receipt time is kept), so a wait that starts
 * after the event still sees it: no race between an action's answer and its events.
 */
export class EventHub {
  readonly client: RpcClient;
  readonly #events = new Map<string, SeenEvent[]>();
  readonly #firstOutput = new Map<string, number>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #skillListeners = new Set<(ids: string[], at: number) => void>();

  private constructor(client: RpcClient) {
    this.client = client;
    client.on('job/event', (params) => this.#receive(params as Omit<SeenEvent, 'at'>));
    client.on('skills/changed', (params) => {
      const at = nowMs();
      for (const listener of this.#skillListeners) listener((params as { ids: string[] }).ids, at);
    });
  }

  static async attach(client: RpcClient): Promise<EventHub> {
    const hub = new EventHub(client);
    await client.request('jobs/subscribe', {});
    return hub;
  }

  #receive(raw: Omit<SeenEvent, 'at'>): void {
    const at = nowMs();
    if (raw.type === 'output') {
      if (!this.#firstOutput.has(raw.job_id)) this.#firstOutput.set(raw.job_id, at);
      return;
    }
    const event: SeenEvent = { ...raw, at };
    let list = this.#events.get(raw.job_id);
    if (list === undefined) {
      list = [];
      this.#events.set(raw.job_id, list);
    }
    list.push(event);
    const waiters = this.#waiters.get(raw.job_id);
    if (waiters === undefined) return;
    for (const waiter of [...waiters]) {
      if (!waiter.pred(event)) continue;
      waiters.delete(waiter);
      waiter.resolve(event);
    }
  }

  /** How many (non-output) events of this job were received so far: pass it as `from` to wait only for later ones. */
  mark(jobId: string): number {
    return this.#events.get(jobId)?.length ?? 0;
  }

  events(jobId: string): SeenEvent[] {
    return this.#events.get(jobId) ?? [];
  }

  firstOutputAt(jobId: string): number | undefined {
    return this.#firstOutput.get(jobId);
  }

  /** Resolves with the first event (at index `from` or later) that matches. */
  waitFor(jobId: string, pred: (event: SeenEvent) => boolean, opts: { from?: number; timeoutMs?: number; what?: string } = {}): Promise<SeenEvent> {
    const list = this.#events.get(jobId) ?? [];
    for (let i = opts.from ?? 0; i < list.length; i += 1) {
      const event = list[i] as SeenEvent;
      if (pred(event)) return Promise.resolve(event);
    }
    const timeoutMs = opts.timeoutMs ?? 180_000;
    return new Promise<SeenEvent>((resolve, reject) => {
      let set = this.#waiters.get(jobId);
      if (set === undefined) {
        set = new Set();
        this.#waiters.set(jobId, set);
      }
      const waiters = set;
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        const seen = this.events(jobId).map((e) => `${e.type}${e.type === 'status_changed' ? `→${String(e.data?.['to'])}` : ''}`).join(', ');
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'an event'} of ${jobId} (events so far: ${seen || 'none'})`));
      }, timeoutMs);
      const waiter: Waiter = {
        pred,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      waiters.add(waiter);
    });
  }

  /**
   * Resolves with the status_changed event into one of `statuses`. If the job ends in another
   * status first, rejects with the job's error code and message (from its `finished` event).
   */
  async waitStatus(jobId: string, statuses: readonly string[], opts: { from?: number; timeoutMs?: number } = {}): Promise<SeenEvent> {
    const event = await this.waitFor(
      jobId,
      (e) => (e.type === 'status_changed' && statuses.includes(String(e.data?.['to']))) || (e.type === 'finished' && !statuses.includes(String(e.data?.['status']))),
      { ...opts, what: `status ${statuses.join('|')}` },
    );
    if (event.type === 'finished') {
      const error = event.data?.['error'] as { code?: string; message?: string } | null | undefined;
      throw new Error(`job ${jobId} ended ${String(event.data?.['status'])} (${error?.code ?? 'no error code'}: ${error?.message ?? ''}) instead of reaching ${statuses.join('|')}`);
    }
    return event;
  }

  /** Resolves with the `finished` event, whatever the final status. */
  waitFinished(jobId: string, opts: { from?: number; timeoutMs?: number } = {}): Promise<SeenEvent> {
    return this.waitFor(jobId, (e) => e.type === 'finished' && TERMINAL.includes(String(e.data?.['status'])), { ...opts, what: 'the finished event' });
  }

  /** Resolves at the next `skills/changed` notification naming `id`, with its receipt time. */
  skillChanged(id: string, timeoutMs = 10_000): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const listener = (ids: string[], at: number): void => {
        if (!ids.includes(id)) return;
        this.#skillListeners.delete(listener);
        clearTimeout(timer);
        resolve(at);
      };
      const timer = setTimeout(() => {
        this.#skillListeners.delete(listener);
        reject(new Error(`no skills/changed for ${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#skillListeners.add(listener);
    });
  }
}
