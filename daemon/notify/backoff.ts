/**
 * When a failed delivery is tried again (docs/notify.md, "Retries"). The first retry comes within
 * a second: most failures are a blip (a receiver restarting, a connection dropped), over by then.
 * Each wait after doubles, up to five minutes, so that a receiver that is down for long gets a
 * try every five minutes and not a flood; each wait is drawn from its upper half, so that
 * deliveries that failed together do not all come back at the same moment.
 */

/** The wait before the first retry, at most. */
export const FIRST_RETRY_MS = 1000;
/** The longest wait between two tries. */
export const MAX_RETRY_WAIT_MS = 5 * 60 * 1000;

/** The wait after attempt `attempt` (1 for the first) failed; `random` is in [0, 1). */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(FIRST_RETRY_MS * 2 ** Math.min(Math.max(attempt - 1, 0), 30), MAX_RETRY_WAIT_MS);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
