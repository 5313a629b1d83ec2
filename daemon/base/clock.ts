/** A cancellable timer. */
export interface Timer {
  cancel(): void;
}

/** Time, injected so that tests can move it without sleeping. */
export interface Clock {
  now(): Date;
  setTimer(delayMs: number, callback: () => void): Timer;
}

/** Node's timers cap at 2^31-1 ms; longer delays are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => new Date(),
  setTimer(delayMs, callback) {
    let handle: NodeJS.Timeout;
    const arm = (remaining: number): void => {
      handle = setTimeout(() => (remaining > MAX_TIMER_MS ? arm(remaining - MAX_TIMER_MS) : callback()), Math.min(Math.max(remaining, 0), MAX_TIMER_MS));
    };
    arm(delayMs);
    return { cancel: () => clearTimeout(handle) };
  },
};
