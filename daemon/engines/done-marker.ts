/**
 * The one done-marker detector (D-3.1), used by the turn gate and the audit record alike. It finds
 * `"__SKILL_DONE__": true` plain or escaped inside a JSON string (`\"__SKILL_DONE__\": true`), with
 * any whitespace around the colon.
 */
export const DONE_MARKER_KEY = '__SKILL_DONE__';

// Backslashes before the opening quote need no matching (the test is unanchored), and matching
// them would make the search quadratic: a long run of backslashes froze the daemon for hours.
const DONE_MARKER = /"__SKILL_DONE__\\*"\s*:\s*true(?![\w$])/;

export function hasDoneMarker(messages: readonly string[]): boolean {
  return messages.some((message) => DONE_MARKER.test(message));
}

/** The output without the marker key: the marker is never a business field (D-3). */
export function stripDoneMarker(output: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(output, DONE_MARKER_KEY)) return output;
  const { [DONE_MARKER_KEY]: _marker, ...rest } = output;
  return rest;
}
