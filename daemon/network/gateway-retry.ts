/** What a provider answers when it is limiting the rate or over its capacity: the gateway retries these. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503, 529]);
/** What a provider answers when it refuses the key: the job ends PROVIDER_AUTH_FAILED. */
export const AUTH_STATUSES: ReadonlySet<number> = new Set([401, 403]);

/** The first wait when the provider names none, doubled each time up to the longest. */
const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 30_000;
/** How much later than the provider asked a retry may go, at most: callers that were limited together do not all come back at once. */
const JITTER = 0.2;

/**
 * The wait before retry number `retry` (1 for the first) of a call the provider limited, or null
 * when the provider's wait does not fit in what is left of the budget (`leftMs`). A `Retry-After`
 * (seconds, or an HTTP date, RFC 9110 §10.2.3) is honoured: never less, up to a fifth more;
 * without one, the wait doubles from a second, jittered the same way.
 */
export function retryWait(retryAfter: string | undefined, retry: number, nowMs: number, leftMs: number, random: () => number): number | null {
  const asked = retryAfterMs(retryAfter, nowMs);
  const base = asked ?? Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.max(0, retry - 1));
  if (base > leftMs) return null;
  return Math.min(leftMs, Math.round(base * (1 + JITTER * random())));
}

/** A `Retry-After` in ms from now; null when absent or not one of its two forms. */
export function retryAfterMs(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) || !/[A-Za-z]/.test(text) ? null : Math.max(0, at - nowMs);
}
