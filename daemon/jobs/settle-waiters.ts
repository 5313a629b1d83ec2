/** Callers waiting for a job to settle (terminal, or waiting for a reply): `jobs/cancel` answers then. */
export class SettleWaiters {
  readonly #waiters = new Map<string, Array<() => void>>();

  /** Resolves at the job's next `settled`. */
  next(jobId: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(jobId) ?? [];
      list.push(resolve);
      this.#waiters.set(jobId, list);
    });
  }

  settled(jobId: string): void {
    const list = this.#waiters.get(jobId) ?? [];
    this.#waiters.delete(jobId);
    for (const resolve of list) resolve();
  }
}
