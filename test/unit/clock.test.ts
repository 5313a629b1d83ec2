import t from 'tap';
import { systemClock } from '../../daemon/base/clock.js';

/** Node's setTimeout takes at most 2^31-1 ms; a longer delay fires after 1 ms instead. */
const NODE_MAX_TIMER_MS = 2 ** 31 - 1;

interface Armed {
  delay: number;
  fire: () => void;
  cleared: boolean;
}

/** Runs `body` with setTimeout and clearTimeout recorded instead of armed, so that no time passes. */
function withRecordedTimers(body: (armed: Armed[]) => void): void {
  const armed: Armed[] = [];
  const { setTimeout: realSet, clearTimeout: realClear } = globalThis;
  globalThis.setTimeout = ((fire: () => void, delay: number) => {
    const entry = { delay, fire, cleared: false };
    armed.push(entry);
    return entry;
  }) as unknown as typeof setTimeout;
  globalThis.clearTimeout = ((entry: Armed) => {
    entry.cleared = true;
  }) as unknown as typeof clearTimeout;
  try {
    body(armed);
  } finally {
    globalThis.setTimeout = realSet;
    globalThis.clearTimeout = realClear;
  }
}

t.test('a timer of a year is armed in steps Node can take, and fires once, after the last one', async (t) => {
  const yearMs = 365 * 24 * 60 * 60 * 1000;
  withRecordedTimers((armed) => {
    let fired = 0;
    systemClock.setTimer(yearMs, () => (fired += 1));
    let total = 0;
    for (let step = armed.at(-1); step !== undefined && fired === 0; step = armed.at(-1)) {
      t.ok(step.delay <= NODE_MAX_TIMER_MS, `step of ${step.delay} ms`);
      total += step.delay;
      const before = armed.length;
      step.fire();
      if (fired === 0) t.equal(armed.length, before + 1, 'the next step is armed');
    }
    t.equal(fired, 1);
    t.equal(total, yearMs, 'the steps add up to the whole delay');
  });
});

t.test('cancel stops a long timer whichever step it is in', async (t) => {
  withRecordedTimers((armed) => {
    let fired = false;
    const timer = systemClock.setTimer(3 * NODE_MAX_TIMER_MS, () => (fired = true));
    armed[0]?.fire();
    timer.cancel();
    t.equal(armed[1]?.cleared, true, 'the step in progress is cleared');
    t.notOk(fired);
  });
});
