import type { Clock } from '../base/clock.js';

/** A connection a job's network refused: what was asked for, and why not (docs/network.md, "Refusals"). */
export interface Refusal {
  host: string;
  port: number;
  /** `not_allowed`, `bad_host`, `unresolved` or `address_refused`. */
  reason: string;
  /** In words, for a person. */
  detail: string;
  /** How many refusals before this one were not told, to keep a job's events few. */
  suppressed?: number;
}

/** How many refusals of a job are told in a window; the rest are counted and told with the next. */
export const REFUSALS_PER_WINDOW = 20;
export const REFUSAL_WINDOW_MS = 60_000;

/**
 * Tells a job's refusals, at most `REFUSALS_PER_WINDOW` a minute: an agent that retries a refused
 * call in a loop must not fill its job's events. What is held back is counted, and the first
 * refusal told after it says how many.
 */
export class RefusalLimiter {
  readonly #clock: Clock;
  readonly #tell: (jobId: string, refusal: Refusal) => void;
  readonly #windows = new Map<string, { start: number; told: number; held: number }>();

  constructor(clock: Clock, tell: (jobId: string, refusal: Refusal) => void) {
    this.#clock = clock;
    this.#tell = tell;
  }

  refused(jobId: string, refusal: Refusal): void {
    const now = this.#clock.now().getTime();
    let window = this.#windows.get(jobId);
    if (window === undefined || now - window.start >= REFUSAL_WINDOW_MS) {
      window = { start: now, told: 0, held: window?.held ?? 0 };
      this.#windows.set(jobId, window);
    }
    if (window.told >= REFUSALS_PER_WINDOW) {
      window.held += 1;
      return;
    }
    window.told += 1;
    const held = window.held;
    window.held = 0;
    this.#tell(jobId, held === 0 ? refusal : { ...refusal, suppressed: held });
  }

  forget(jobId: string): void {
    this.#windows.delete(jobId);
  }
}
