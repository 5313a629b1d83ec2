/**
 * Colour for job statuses, on terminals only: a stream gets colour when it is a TTY and allows
 * it (`hasColors()`, which honours NO_COLOR, NODE_DISABLE_COLORS, FORCE_COLOR and TERM=dumb).
 */

/** What colour needs to know of an output stream (process.stdout, process.stderr). */
export interface ColourStream {
  readonly isTTY?: boolean;
  hasColors?(): boolean;
}

/** True when text written to `stream` may carry colour codes. */
export function colourOn(stream: ColourStream): boolean {
  return stream.isTTY === true && stream.hasColors?.() === true;
}

/** The SGR colour of each status: green done, red failed, yellow for what needs someone, cyan at work. */
const STATUS_SGR: Readonly<Record<string, string>> = {
  succeeded: '32',
  failed: '31',
  canceled: '33',
  waiting_user: '33',
  running: '36',
  queued: '34',
};

/** `text` in the colour of `status` when `on` (an unknown status stays plain). */
export function paintStatus(text: string, status: string, on: boolean): string {
  const sgr = STATUS_SGR[status];
  return on && sgr !== undefined && text !== '' ? `\x1b[${sgr}m${text}\x1b[0m` : text;
}

const SGR = /\x1b\[[0-9;]*m/g;

/** How many columns `text` takes: its characters without colour codes. */
export function visibleLength(text: string): number {
  return [...text.replace(SGR, '')].length;
}
