import { colourOn, paintStatus, visibleLength } from './colour.js';
import { escapedText, terminalText } from './terminal-text.js';
import { agoOf, jobDuration } from './time-text.js';
import type { CodedError, JobEvent, JobView } from './wire.js';

const GAP = '  ';
const CLIP_CHARS = 100;

/** One JSON document, pretty-printed: what `--json` prints. Every control character in its strings is escaped, even those JSON allows raw (DEL, C1, bidi). */
export function json(value: unknown): string {
  return escapedText(JSON.stringify(value, null, 2));
}

/** One JSON document on one line, escaped as `json` escapes it: `--json` where each answer or event is a line. */
export function jsonLine(value: unknown): string {
  return escapedText(JSON.stringify(value));
}

/** An aligned table with a header row; the last column is not padded. Cells may be coloured: they are aligned on what shows. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, col) => Math.max(...all.map((row) => visibleLength(row[col] ?? ''))));
  const pad = (cell: string, width: number): string => cell + ' '.repeat(Math.max(0, width - visibleLength(cell)));
  const line = (row: string[]): string => row.map((cell, col) => (col === row.length - 1 ? cell : pad(cell, widths[col] ?? 0))).join(GAP).trimEnd();
  return all.map(line).join('\n');
}

/** `key: value` lines with the values aligned. */
export function keyValues(pairs: Array<[string, string]>): string {
  const width = Math.max(0, ...pairs.map(([key]) => key.length + 1));
  return pairs.map(([key, value]) => `${`${key}:`.padEnd(width)} ${value}`.trimEnd()).join('\n');
}

/** A wire value as one table cell: `-` for null or empty, text with its control characters shown, lists comma-joined, objects as compact JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') return terminalText(value);
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(',');
  if (typeof value === 'object') return jsonLine(value);
  return String(value);
}

/** An ISO time without milliseconds. */
export function shortTime(value: unknown): string {
  return typeof value === 'string' ? terminalText(value).replace(/\.\d+Z$/, 'Z') : cell(value);
}

/** `CODE: message`, as errors appear in human output; a message may quote an engine, so its control characters are shown. */
export function errorText(error: CodedError): string {
  return terminalText(`${error.code}: ${error.message}`);
}

const JOB_FIELD_TEXT: Record<string, (value: unknown) => string> = {
  error: (value) => (value === null ? '-' : errorText(value as CodedError)),
  interactive_profile: (value) => (value === null ? '-' : `${(value as { kind: string }).kind} (${(value as { reason: string }).reason})`),
  session_handle: (value) => (value === null ? '-' : cell((value as { handle_value: string }).handle_value)),
  owner: (value) => cell((value as { user: string }).user),
  share_with: (value) => (value as string[]).map(cell).join(', '),
  input: (value) => clip(JSON.stringify(value)),
  parameter: (value) => clip(JSON.stringify(value)),
  usage: (value) => {
    const usage = value as Record<string, number>;
    return `${usage['input_tokens']} tokens in (${usage['cached_input_tokens']} cached), ${usage['output_tokens']} out, ${usage['requests']} model calls`;
  },
};

/** One job as `key: value` lines, every field the daemon sent, in its order. */
export function jobDetails(job: JobView): string {
  return keyValues(Object.entries(job).map(([key, value]) => [key, (JOB_FIELD_TEXT[key] ?? (key.endsWith('_at') ? shortTime : cell))(value)]));
}

/**
 * A table of jobs: id, skill, engine, mode, status (coloured with `colour`: on a terminal that
 * allows it), how long ago it was created, how long it ran (so far, for one still going; `-` when
 * it never started), error code. `--json` and `show` keep the ISO times.
 */
export function jobTable(jobs: JobView[], now: number, colour: boolean = colourOn(process.stdout)): string {
  const rows = jobs.map((job) => [
    job.job_id,
    job.owner?.user ?? '-',
    job.skill_id,
    job.engine,
    job.execution_mode,
    paintStatus(job.status, job.status, colour),
    agoOf(job.created_at, now),
    jobDuration(job, now),
    job.error?.code ?? '-',
  ]);
  return table(['JOB_ID', 'USER', 'SKILL', 'ENGINE', 'MODE', 'STATUS', 'CREATED', 'DURATION', 'ERROR'], rows);
}

type Data = Record<string, unknown>;

const EVENT_SUMMARY: Record<string, (data: Data) => string> = {
  status_changed: (data) => `${cell(data['from'])} -> ${cell(data['to'])}`,
  input_required: (data) => clip(String((data['pending'] as Data | null)?.['prompt'] ?? '')),
  output: (data) => `${cell(data['stream'])}: ${clip(String(data['text'] ?? ''))}`,
  warning: (data) => cell(data['code']),
  network_refused: (data) => clip(`${String(data['host'])}:${String(data['port'])} ${String(data['reason'])}: ${String(data['detail'] ?? '')}${typeof data['suppressed'] === 'number' ? ` (${data['suppressed']} more held back before it)` : ''}`),
  provider_retry: (data) => `provider answered ${String(data['status'])}: retry ${String(data['retry'])} in ${(Number(data['wait_ms']) / 1000).toFixed(1)} s`,
  message: (data) => clip(String(data['text'] ?? '')),
  finished: (data) => (data['error'] ? `${cell(data['status'])} ${errorText(data['error'] as CodedError)}` : cell(data['status'])),
};

/** One event as a human line: `<ts> <job_id> #<seq> <type> <short data>`. */
export function eventLine(event: JobEvent): string {
  const data = typeof event.data === 'object' && event.data !== null ? (event.data as Data) : {};
  const summary = EVENT_SUMMARY[event.type]?.(data) ?? clip(JSON.stringify(event.data) ?? '');
  return `${event.ts} ${event.job_id} #${event.seq} ${event.type} ${summary}`.trimEnd();
}

/** Text on one line (control characters shown, line breaks as `\n`), cut to a readable length. */
export function clip(text: string): string {
  const flat = terminalText(text.trimEnd()).replace(/\r?\n/g, '\\n');
  return flat.length > CLIP_CHARS ? `${flat.slice(0, CLIP_CHARS - 1)}…` : flat;
}
