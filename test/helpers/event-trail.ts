import type { TestDaemon } from './daemon.js';

/** One `job/event` notification. */
export interface JobEvent {
  job_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** Every event of one job, from seq 1 on (replay, then live), on its own connection. */
export class EventTrail {
  readonly #bySeq = new Map<number, JobEvent>();
  readonly #wakers = new Set<() => void>();
  static async follow(daemon: TestDaemon, jobId: string): Promise<EventTrail> {
    const trail = new EventTrail();
    const c = await daemon.client();
    c.on('job/event', (params) => {
      const event = params as JobEvent;
      if (event.job_id !== jobId) return;
      trail.#bySeq.set(event.seq, event);
      for (const wake of trail.#wakers) wake();
    });
    await c.request('jobs/subscribe', { job_id: jobId, after_seq: 0 });
    return trail;
  }
  /** Resolves once an event matching `test` has arrived on this trail's own connection. */
  async until(test: (event: JobEvent) => boolean): Promise<void> {
    while (!this.events.some(test)) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#wakers.delete(wake);
          resolve();
        };
        this.#wakers.add(wake);
      });
    }
  }
  /** Resolves once the job's `finished` event has arrived. */
  finished(): Promise<void> {
    return this.until((e) => e.type === 'finished');
  }
  get events(): JobEvent[] {
    return [...this.#bySeq.values()].sort((a, b) => a.seq - b.seq);
  }
  /** The `to` of every status_changed, in order. */
  get statuses(): string[] {
    return this.events.filter((e) => e.type === 'status_changed').map((e) => String(e.data['to']));
  }
  of(type: string): JobEvent[] {
    return this.events.filter((e) => e.type === type);
  }
}
