import { lineSign, linesSign, type ProviderSign } from './provider-errors.js';

/**
 * A failed turn's message quotes what the engine said, for a person to act on without opening the
 * logs: its first meaningful line, where the reason is usually stated (a Rust panic's `thread
 * 'main' panicked at …`, an uncaught error's `Error: …`), not the tail of a backtrace; and never
 * a secret the engine echoed (an API key in a provider's answer), which a job's error would keep
 * and show to whoever reads the job.
 */

/** At most this many characters of one line go into a message. */
export const QUOTE_MAX_CHARS = 300;
/** How much of one line is kept and read for a quote: a line can be megabytes long. */
const KEEP_CHARS = 2000;
/** How many of the last meaningful stderr lines are kept, for the sign of a provider's refusal (`StderrNotes.sign`). */
export const STDERR_LAST_LINES = 3;

/** Lines that say nothing of what went wrong. */
const NOT_MEANINGFUL: readonly RegExp[] = [
  // blank, or only punctuation, symbols and control characters: `}`, `^`, `---`, a colour reset
  /^[\s\p{P}\p{S}\p{Cc}]*$/u,
  // a backtrace: Rust's frames (`   5: <unknown>`) and their `at <file>:<line>` lines, JavaScript's
  // frames (`    at foo (file:1:2)`), Python's (`  File "x.py", line 3`), and their headers
  /^\s+\d+:\s/,
  /^\s+at\s/,
  /^at\s.*:\d+(?::\d+)?\)?$/,
  /^\s+File ".*", line \d+/,
  /^\s*(?:stack backtrace|Traceback \(most recent call last\)):?\s*$/,
  // Rust's advice on backtraces, Node's version footer and process warnings
  /^\s*note: (?:run with `RUST_BACKTRACE|Some details are omitted)/,
  /^\s*Node\.js v\d/,
  /^\s*\(node:\d+\) /,
  /^\s*\(Use `node --trace-/,
  // notices: `Warning: …`, `WARNING: …`, `note: …`, `[STARTUP] …`, `[DEBUG] …`
  /^\s*(?:\[(?:warn(?:ing)?|info|debug|trace|startup)\]|(?:warn(?:ing)?|note|info|debug|trace):)/i,
  // what the engines print on stderr at every start (docs/engines.md)
  /^(?:YOLO mode is enabled|Ripgrep is not available|Reading (?:additional input|prompt) from stdin|Loaded cached credentials)/,
];

/**
 * Node's uncaught exception starts with the place (`file:///x/cli.js:10`, or a module of Node's
 * own: `node:fs:1372` where a system call failed), then the line of source there.
 */
const SOURCE_PLACE = /^(?:(?:file:\/\/)?\/\S*|node:[\w/]+):\d+$/;

/**
 * Tells the meaningful lines of an engine's output, one line after another: after the place
 * of an uncaught exception, the line of source that follows is skipped with it.
 */
export class MeaningfulLines {
  #skipNext = false;

  meaningful(line: string): boolean {
    if (this.#skipNext) {
      this.#skipNext = false;
      return false;
    }
    if (SOURCE_PLACE.test(line)) {
      this.#skipNext = true;
      return false;
    }
    return !NOT_MEANINGFUL.some((pattern) => pattern.test(line));
  }
}

/** Keys and tokens as providers issue them, and what is said around one. */
const SECRETS: ReadonlyArray<[RegExp, string]> = [
  [/\b(Bearer\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}/gi, '$1[redacted]'],
  [/\b(x-api-key|x-goog-api-key|api[_-]?key|access_token)(["']?\s{0,3}[:=]\s{0,3}["']?)[^\s"',;}&]{6,}/gi, '$1$2[redacted]'],
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, '[redacted]'],
  [/\bAIza[0-9A-Za-z_-]{20,}/g, '[redacted]'],
  [/\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}/g, '[redacted]'],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, '[redacted]'],
  [/\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?/g, '[redacted]'],
  [/\b[0-9a-fA-F]{32,}\b/g, '[redacted]'],
];
/** A run of base64 (or base64url) of at least 32 characters: a token, unless it reads as words (`run-sendMessageStream-2026-11-28T03-30-08`). */
const LONG_RUN = /[A-Za-z0-9+/_=-]{32,}/g;

function looksLikeToken(run: string): boolean {
  const separators = run.replace(/[^+/_=-]/g, '').length;
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run) && separators * 8 < run.length;
}

/** `text` with whatever looks like an API key or a token as `[redacted]`. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return out.replace(LONG_RUN, (run) => (looksLikeToken(run) ? '[redacted]' : run));
}

/** One line as a message quotes it: trimmed, secrets redacted, at most `QUOTE_MAX_CHARS` characters (cut with `…`). */
export function quoteLine(line: string): string {
  const text = redactSecrets(line.slice(0, KEEP_CHARS)).trim();
  if (text.length <= QUOTE_MAX_CHARS) return text;
  let end = QUOTE_MAX_CHARS - 1;
  // Never half a character of UTF-16's pairs.
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** The first meaningful line of a text the engine reported (its lines, else its first non-blank one), quoted; null for none. */
export function quoteText(text: string | null): string | null {
  if (text === null) return null;
  const lines = text.split('\n');
  const filter = new MeaningfulLines();
  const line = lines.find((candidate) => filter.meaningful(candidate)) ?? lines.find((candidate) => candidate.trim() !== '');
  return line === undefined ? null : quoteLine(line);
}

/**
 * What a turn's stderr said, in bounded memory whatever its length: its first meaningful line, its
 * last few, how many there were, and its first non-blank line for when none is meaningful.
 */
export class StderrNotes {
  readonly #filter = new MeaningfulLines();
  #first: string | null = null;
  #last: string[] = [];
  #count = 0;
  #firstAny: string | null = null;

  line(text: string): void {
    const kept = text.slice(0, KEEP_CHARS);
    if (kept.trim() === '') return;
    this.#firstAny ??= kept;
    if (!this.#filter.meaningful(kept)) return;
    this.#count += 1;
    this.#first ??= kept;
    if (this.#last.length >= STDERR_LAST_LINES) this.#last.shift();
    this.#last.push(kept);
  }

  /** The first meaningful line, quoted; null when none was. */
  get first(): string | null {
    return this.#first === null ? null : quoteLine(this.#first);
  }

  /**
   * Whether the engine's last meaningful words were the provider's refusal: the lines at the very
   * end that each give a sign (Gemini's error document: its message, then its code), so that a
   * refusal the engine got past (a retried 429) does not explain a later failure; none where a
   * proxy's refusal is among the last lines.
   */
  get sign(): ProviderSign | null {
    let from = this.#last.length;
    while (from > 0 && lineSign(this.#last[from - 1] ?? '') !== null) from -= 1;
    if (from === this.#last.length || linesSign(this.#last) === null) return null;
    return linesSign(this.#last.slice(from));
  }

  /**
   * The stderr as a message quotes it: the first meaningful line and, where it is another, the
   * last (`first | last`, or `first | … | last` with lines between); else the first non-blank line.
   */
  summary(): string | null {
    const last = this.#last.at(-1);
    if (this.#first === null || last === undefined) return this.#firstAny === null ? null : quoteLine(this.#firstAny);
    if (this.#count === 1) return quoteLine(this.#first);
    return `${quoteLine(this.#first)} | ${this.#count > 2 ? '… | ' : ''}${quoteLine(last)}`;
  }
}
