/**
 * Times as people read them in tables: durations (`4s`, `2m05s`, `1h02m`, `3d04h`) and ages
 * (`12s ago`, `3 min ago`, `2 h ago`, `5 days ago`). Pure: "now" is always passed in.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const two = (n: number): string => String(n).padStart(2, '0');

/** A duration in milliseconds, to the two largest units: `<1s`, `4s`, `2m05s`, `1h02m`, `3d04h`. */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < SECOND) return '<1s';
  const s = Math.floor(ms / SECOND);
  if (ms < MINUTE) return `${s}s`;
  if (ms < HOUR) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  const m = Math.floor(ms / MINUTE);
  if (ms < DAY) return `${Math.floor(m / 60)}h${two(m % 60)}m`;
  const h = Math.floor(ms / HOUR);
  return `${Math.floor(h / 24)}d${two(h % 24)}h`;
}

/** How long ago `then` was, seen from `now` (both in ms): `just now`, `12s ago`, `3 min ago`, `2 h ago`, `5 days ago`, `4 months ago`, `2 years ago`. */
export function agoText(then: number, now: number): string {
  const ms = now - then;
  if (!Number.isFinite(ms)) return '-';
  if (ms < SECOND) return 'just now'; // a clock a little ahead counts as now too
  if (ms < MINUTE) return `${Math.floor(ms / SECOND)}s ago`;
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min ago`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)} h ago`;
  const days = Math.floor(ms / DAY);
  if (days < 60) return `${days} ${days === 1 ? 'day' : 'days'} ago`;
  if (days < 730) return `${Math.floor(days / 30)} months ago`;
  return `${Math.floor(days / 365)} years ago`;
}

/** The parts of a job record that say when it ran. */
export interface JobTimes {
  status: string;
  started_at?: unknown;
  finished_at?: unknown;
  updated_at?: unknown;
}

/** An ISO time in ms; null when absent or not a time. */
function parsed(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * How long a job has run: from `started_at` to `finished_at`, or until `now` while it has not
 * finished (a waiting job's time counts: it is not over). `-` when it never started.
 */
export function jobDuration(job: JobTimes, now: number): string {
  const started = parsed(job.started_at);
  if (started === null) return '-';
  const finished = parsed(job.finished_at);
  const terminal = job.status === 'succeeded' || job.status === 'failed' || job.status === 'canceled';
  const end = finished ?? (terminal ? parsed(job.updated_at) : null) ?? now;
  return durationText(end - started);
}

/** An ISO time as an age (`3 min ago`); the value itself when it is not a time. */
export function agoOf(value: unknown, now: number): string {
  const ms = parsed(value);
  return ms === null ? (typeof value === 'string' && value !== '' ? value : '-') : agoText(ms, now);
}
