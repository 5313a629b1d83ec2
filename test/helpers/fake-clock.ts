import type { Clock, Timer } from '../../daemon/base/clock.js';

interface Pending {
  at: number;
  callback: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to: timers fire inside `advance`, in time order. */
export class FakeClock implements Clock {
  #now: number;
  #timers: Pending[] = [];

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.#now = start;
  }

  now(): Date {
    return new Date(this.#now);
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const timer: Pending = { at: this.#now + Math.max(delayMs, 0), callback, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((timer) => !timer.cancelled && timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
      this.#now = Math.max(this.#now, due.at);
      due.callback();
    }
    this.#now = until;
  }
}

/** The real time, with timers that never fire by themselves: the test says when the next round runs. */
export const stillClock: Clock = { now: () => new Date(), setTimer: () => ({ cancel: () => undefined }) };
