/**
 * Runs at most `max` tasks at once; the others wait their turn in order. `onBusy` is told when
 * tasks start waiting and when none waits any more, so a reader can stop taking input meanwhile.
 */
export class Limiter {
  readonly #max: number;
  readonly #waiting: Array<() => void> = [];
  readonly #onBusy: (busy: boolean) => void;
  #running = 0;

  constructor(max: number, onBusy: (busy: boolean) => void = () => undefined) {
    this.#max = max;
    this.#onBusy = onBusy;
  }

  get running(): number {
    return this.#running;
  }

  /** Tasks waiting for a place. */
  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#max) {
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve);
        if (this.#waiting.length === 1) this.#onBusy(true);
      });
    } else {
      this.#running += 1;
    }
    try {
      return await task();
    } finally {
      this.#next();
    }
  }

  #next(): void {
    const resolve = this.#waiting.shift();
    // The finishing task hands its place to the next one: the count stays the same.
    if (resolve === undefined) {
      this.#running -= 1;
      return;
    }
    if (this.#waiting.length === 0) this.#onBusy(false);
    resolve();
  }
}
