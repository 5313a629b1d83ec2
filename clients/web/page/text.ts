// Text as the page shows it. What a skill, an agent or an engine wrote goes through skillctl's
// `terminalText` (clients/terminal-text.ts), imported by each view where it shows such text: its
// control characters shown as escapes (`\x1b`, `\u202e`) rather than acting on the page (a bidi
// override could reorder what a person reads before allowing a command), as on a terminal.

/** A value as text: a string as it is, anything else as indented JSON. */
export function valueText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'null');
}

/** How long ago `iso` was, in one short unit: `12s`, `5m`, `3h`, `2d`. */
export function age(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** A job id without its `job-` head, as short as skillctl shows it. */
export function shortId(jobId: string): string {
  return jobId.replace(/^job-/, '').slice(0, 10);
}

/** A status as people read it. */
export function statusText(status: string): string {
  return status === 'waiting_user' ? 'waiting for you' : status;
}

/** A time as a local date and time. */
export function timeText(iso: string | null): string {
  return iso === null ? '–' : new Date(iso).toLocaleString();
}
