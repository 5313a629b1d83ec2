import { paintStatus } from './colour.js';
import { terminalText } from './terminal-text.js';
import { durationText } from './time-text.js';

/** Back to the start of the line, and erase it: what clears the status line. */
export const CLEAR_LINE = '\r\x1b[K';

/** The width assumed for a terminal that does not tell its own (a size of 0 columns). */
const DEFAULT_COLUMNS = 80;

/** How often the elapsed time ticks. */
export const TICK_MS = 1000;

/** What the status line shows. */
export interface StatusView {
  status: string;
  /** Milliseconds since the job started. */
  elapsedMs: number;
  /** The agent's latest message, or null before it has said anything. */
  message: string | null;
}

/** A message on one line: its control characters shown as every printer shows them (terminalText), line breaks and tabs as spaces, runs of space one. */
export function oneLine(text: string): string {
  return terminalText(text).replace(/\s+/g, ' ').trim();
}

/**
 * The status line: `<status> <elapsed>  <message>`, cut to fit in `width` columns less one (a
 * line that fills the last column wraps on some terminals), ending in `…` when cut. Only the
 * status is coloured, and only with `colour`.
 */
export function statusLineText(view: StatusView, width: number, colour: boolean): string {
  const head = `${view.status} ${durationText(Math.max(0, view.elapsedMs))}`; // a clock a little behind counts as no time yet
  const message = view.message === null ? '' : oneLine(view.message);
  const chars = [...(message === '' ? head : `${head}  ${message}`)];
  const room = Math.max(1, width - 1);
  const text = chars.length <= room ? chars.join('') : `${chars.slice(0, room - 1).join('')}…`;
  return text.startsWith(`${view.status} `) ? paintStatus(view.status, view.status, colour) + text.slice(view.status.length) : text;
}

/** Where the status line is drawn: a terminal's output stream. */
export interface StatusSink {
  write(text: string): unknown;
  readonly columns?: number;
}

/**
 * One line redrawn in place (`\r`, clear to the end of the line, the text) while a job is
 * followed: on each change and each second. `clear` takes it away before anything else is
 * printed; `hold` keeps it away while someone answers a question.
 */
export class StatusLine {
  readonly #sink: StatusSink;
  readonly #colour: boolean;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;
  /** Nothing is drawn until the status is known. */
  #status: string | null = null;
  #since: number;
  #message: string | null = null;
  #shown = false;
  #held = 0;
  #stopped = false;

  constructor(sink: StatusSink, options: { since: number; colour: boolean; now?: () => number }) {
    this.#sink = sink;
    this.#colour = options.colour;
    this.#since = options.since;
    this.#now = options.now ?? Date.now;
    this.#timer = setInterval(() => this.draw(), TICK_MS);
    this.#timer.unref();
  }

  /** Changes what the line shows, and redraws it. */
  update(change: { status?: string; message?: string; since?: number }): void {
    if (change.status !== undefined) this.#status = change.status;
    if (change.message !== undefined) this.#message = change.message;
    if (change.since !== undefined) this.#since = change.since;
    this.draw();
  }

  draw(): void {
    if (this.#stopped || this.#held > 0 || this.#status === null) return;
    const view = { status: this.#status, elapsedMs: this.#now() - this.#since, message: this.#message };
    this.#sink.write(`${CLEAR_LINE}${statusLineText(view, this.#sink.columns || DEFAULT_COLUMNS, this.#colour)}`);
    this.#shown = true;
  }

  /** Takes the line away (until the next draw). */
  clear(): void {
    if (!this.#shown) return;
    this.#sink.write(CLEAR_LINE);
    this.#shown = false;
  }

  /** Runs `work` with the line away, then draws it again. */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    this.#held += 1;
    this.clear();
    try {
      return await work();
    } finally {
      this.#held -= 1;
      this.draw();
    }
  }

  /** Takes the line away for good. */
  stop(): void {
    clearInterval(this.#timer);
    this.clear();
    this.#stopped = true;
  }
}
