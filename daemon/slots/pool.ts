/**
 * The slot pool: at most `max` jobs hold a slot; others wait in FIFO order. Holding is keyed by
 * job id, so releasing is idempotent and a slot cannot be held twice by one job.
 */
export class SlotPool {
  readonly max: number;
  readonly #holders = new Set<string>();
  readonly #waiters = new Map<string, () => void>();
  readonly #onRelease: (() => void)[] = [];

  constructor(max: number) {
    this.max = max;
  }

  /** Calls `onGrant` once the job holds a slot (at once when one is free). */
  request(jobId: string, onGrant: () => void): void {
    if (this.#holders.has(jobId) || this.#waiters.has(jobId)) throw new Error(`job ${jobId} already holds or awaits a slot`);
    if (this.#holders.size < this.max) {
      this.#holders.add(jobId);
      onGrant();
      return;
    }
    this.#waiters.set(jobId, onGrant);
  }

  /**
   * The job holds a slot at once: its engine runs already (taken up after a restart). It may hold
   * one over `max` (a restart with a smaller `max_concurrent`); grants wait until that is undone.
   */
  occupy(jobId: string): void {
    this.#waiters.delete(jobId);
    this.#holders.add(jobId);
  }

  /** Removes a waiting request; true when there was one. */
  withdraw(jobId: string): boolean {
    return this.#waiters.delete(jobId);
  }

  /** Gives the job's slot back (no-op if it holds none) and grants waiters in order. */
  release(jobId: string): void {
    if (!this.#holders.delete(jobId)) return;
    this.#grantWaiting();
    for (const listener of this.#onRelease) listener();
  }

  /** Called after each release, once the waiters had their turn (a shared queue's claimer fills what is still free). */
  onRelease(listener: () => void): void {
    this.#onRelease.push(listener);
  }

  holds(jobId: string): boolean {
    return this.#holders.has(jobId);
  }

  /** The job holds a slot or waits for one. */
  has(jobId: string): boolean {
    return this.#holders.has(jobId) || this.#waiters.has(jobId);
  }

  stats(): { max: number; used: number; queued: number } {
    return { max: this.max, used: this.#holders.size, queued: this.#waiters.size };
  }

  #grantWaiting(): void {
    for (const [jobId, onGrant] of this.#waiters) {
      if (this.#holders.size >= this.max) return;
      this.#waiters.delete(jobId);
      this.#holders.add(jobId);
      onGrant();
    }
  }
}
