import type { Clock, Timer } from '../base/clock.js';

/**
 * Wait deadlines: one timer serves the nearest of them (no polling). Due jobs are handed to
 * `onDue` one by one; what to do (and whether it still applies) is the caller's decision.
 */
export class Deadlines {
  readonly #clock: Clock;
  readonly #onDue: (jobId: string) => void;
  readonly #due = new Map<string, number>();
  #timer: Timer | null = null;
  #armedFor: number | null = null;

  constructor(clock: Clock, onDue: (jobId: string) => void) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  set(jobId: string, at: Date): void {
    this.#due.set(jobId, at.getTime());
    this.#arm();
  }

  clear(jobId: string): void {
    if (this.#due.delete(jobId)) this.#arm();
  }

  get size(): number {
    return this.#due.size;
  }

  close(): void {
    this.#timer?.cancel();
    this.#timer = null;
    this.#due.clear();
  }

  #arm(): void {
    let next: number | null = null;
    for (const at of this.#due.values()) if (next === null || at < next) next = at;
    if (next === this.#armedFor) return;
    this.#timer?.cancel();
    this.#timer = null;
    this.#armedFor = next;
    if (next === null) return;
    this.#timer = this.#clock.setTimer(next - this.#clock.now().getTime(), () => this.#fire());
  }

  #fire(): void {
    this.#timer = null;
    this.#armedFor = null;
    const now = this.#clock.now().getTime();
    const due = [...this.#due].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1]);
    for (const [jobId] of due) this.#due.delete(jobId);
    this.#arm();
    for (const [jobId] of due) this.#onDue(jobId);
  }
}
