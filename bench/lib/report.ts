import { fmt } from './stats.js';

export type TargetKind = 'ratio<=' | 'ratio>=' | 'value<=';

export interface CheckInput {
  /** e.g. "ping p50". */
  metric: string;
  value: number;
  unit: string;
  /** The same figure measured on the baseline in the same run; null when there is none. */
  baseline: number | null;
  /** What the baseline is, e.g. "bare". */
  baselineLabel: string;
  target: { kind: TargetKind; limit: number };
  /** The ratio to print when it is not value / baseline (e.g. totals, when the value is a difference). */
  ratio?: number;
  /** Extra words after the target, e.g. why a target is what it is. */
  note?: string;
}

export interface CheckRow extends Omit<CheckInput, 'ratio'> {
  bench: string;
  ratio: number | null;
  pass: boolean;
}

export interface BenchFailure {
  bench: string;
  error: string;
}

function targetText(target: CheckInput['target'], unit: string): string {
  switch (target.kind) {
    case 'ratio<=':
      return `ratio <= ${target.limit}`;
    case 'ratio>=':
      return `ratio >= ${target.limit}`;
    case 'value<=':
      return `<= ${target.limit} ${unit}`;
  }
}

/** Collects every check (figure, baseline, ratio, target) and prints it as it is made. */
export class Reporter {
  readonly quick: boolean;
  readonly rows: CheckRow[] = [];
  readonly failures: BenchFailure[] = [];
  readonly #print: (line: string) => void;

  constructor(quick: boolean, print: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {
    this.quick = quick;
    this.#print = print;
  }

  forBench(bench: string): BenchReporter {
    return new BenchReporter(bench, this, this.#print);
  }

  fail(bench: string, error: string): void {
    this.failures.push({ bench, error });
    this.#print(`${bench} ERROR ${error}`);
  }

  /** Full mode: a failed target or a benchmark that did not run. Quick mode: only the latter, or a figure that is not a number. */
  exitCode(): number {
    if (this.failures.length > 0) return 1;
    if (this.quick) return this.rows.every((row) => Number.isFinite(row.value)) ? 0 : 1;
    return this.rows.every((row) => row.pass) ? 0 : 1;
  }

  summaryTable(): string {
    const head = ['bench', 'metric', 'value', 'baseline', 'ratio', 'target', this.quick ? 'result (not asserted)' : 'result'];
    const body = this.rows.map((row) => [
      row.bench,
      row.metric,
      `${fmt(row.value)} ${row.unit}`,
      row.baseline === null ? '-' : `${row.baselineLabel} ${fmt(row.baseline)} ${row.unit}`,
      row.ratio === null ? 'n/a' : fmt(row.ratio),
      targetText(row.target, row.unit),
      verdict(row, this.quick),
    ]);
    for (const failure of this.failures) body.push([failure.bench, '(did not complete)', '-', '-', '-', '-', 'ERROR']);
    const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
    const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ').trimEnd();
    return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
  }
}

function verdict(row: CheckRow, quick: boolean): string {
  if (!Number.isFinite(row.value)) return 'NO NUMBER';
  if (quick) return row.pass ? '(would pass)' : '(would fail)';
  return row.pass ? 'PASS' : 'FAIL';
}

export class BenchReporter {
  readonly bench: string;
  readonly #parent: Reporter;
  readonly #print: (line: string) => void;

  constructor(bench: string, parent: Reporter, print: (line: string) => void) {
    this.bench = bench;
    this.#parent = parent;
    this.#print = print;
  }

  get quick(): boolean {
    return this.#parent.quick;
  }

  /** A plain line of figures (no target). */
  info(text: string): void {
    this.#print(`${this.bench}   ${text}`);
  }

  /**
   * What a path adds at p50 over its baseline, both measured in this run: at most `limitMs`. The
   * ratio printed is total over baseline; `note` starts with the measured path's own p50.
   */
  checkAddedP50(metric: string, measured: { p50: number }, baseline: { p50: number }, labels: { measured: string; baseline: string }, limitMs = 10): CheckRow {
    return this.check({
      metric,
      value: measured.p50 - baseline.p50,
      unit: 'ms',
      baseline: baseline.p50,
      baselineLabel: labels.baseline,
      target: { kind: 'value<=', limit: limitMs },
      ratio: measured.p50 / baseline.p50,
      note: `${labels.measured} p50 ${fmt(measured.p50)} ms; ratio = total / ${labels.baseline}`,
    });
  }

  check(input: CheckInput): CheckRow {
    const ratio = input.ratio ?? (input.baseline === null || input.baseline === 0 || !Number.isFinite(input.baseline) ? null : input.value / input.baseline);
    let pass: boolean;
    switch (input.target.kind) {
      case 'ratio<=':
        pass = ratio !== null && ratio <= input.target.limit;
        break;
      case 'ratio>=':
        pass = ratio !== null && ratio >= input.target.limit;
        break;
      case 'value<=':
        pass = Number.isFinite(input.value) && input.value <= input.target.limit;
        break;
    }
    const row: CheckRow = { ...input, bench: this.bench, ratio, pass };
    this.#parent.rows.push(row);
    const base = input.baseline === null ? 'no baseline' : `${input.baselineLabel} ${fmt(input.baseline)} ${input.unit}`;
    const note = input.note === undefined ? '' : `; ${input.note}`;
    this.#print(`${this.bench} ${input.metric} ${fmt(input.value)} ${input.unit} (${base}, ratio ${ratio === null ? 'n/a' : fmt(ratio)}, target ${targetText(input.target, input.unit)}${note}) ${verdict(row, this.quick)}`);
    return row;
  }
}
