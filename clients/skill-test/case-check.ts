import type { Expectation } from './case-file.js';

/** How a case's job ended, as `skills test` compares it with the case's `expect`. */
export interface CaseOutcome {
  status: string;
  output: unknown;
  error: { code: string; message: string } | null;
  /** The job's artifacts, as paths below its artifacts folder. */
  artifacts: string[];
}

/** One thing that differs: where (`status`, `output.summary`, `artifacts`), what the case expects and what the job gave. */
export interface Difference {
  path: string;
  expected: string;
  actual: string;
}

/**
 * What differs between what a case expects and how its job ended; empty when the case passes.
 * `output` is a subset: each field the case gives must be there with an equal value, recursively
 * for objects; arrays must have the same length and elements that match the same way.
 */
export function differences(expect: Expectation, outcome: CaseOutcome): Difference[] {
  const found: Difference[] = [];
  if (outcome.status !== expect.status) {
    const why = outcome.error === null ? '' : ` (${outcome.error.code}: ${outcome.error.message})`;
    found.push({ path: 'status', expected: expect.status, actual: `${outcome.status}${why}` });
  }
  if (expect.error_code !== undefined && outcome.error?.code !== expect.error_code) {
    found.push({ path: 'error_code', expected: expect.error_code, actual: outcome.error?.code ?? '(no error)' });
  }
  if (expect.output !== undefined) subset(expect.output, outcome.output, 'output', found);
  for (const name of expect.artifacts ?? []) {
    if (!outcome.artifacts.includes(name)) found.push({ path: 'artifacts', expected: name, actual: outcome.artifacts.length === 0 ? '(none)' : outcome.artifacts.join(', ') });
  }
  return found;
}

function subset(expected: unknown, actual: unknown, path: string, found: Difference[]): void {
  if (isRecord(expected) && isRecord(actual)) {
    for (const [key, value] of Object.entries(expected)) {
      const at = `${path}.${key}`;
      if (!(key in actual)) found.push({ path: at, expected: show(value), actual: '(missing)' });
      else subset(value, actual[key], at, found);
    }
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    expected.forEach((value, i) => subset(value, actual[i], `${path}[${i}]`, found));
    return;
  }
  if (!equal(expected, actual)) found.push({ path, expected: show(expected), actual: actual === undefined ? '(missing)' : show(actual) });
}

function equal(a: unknown, b: unknown): boolean {
  if (isRecord(a) && isRecord(b)) return Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => k in b && equal(v, b[k]));
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => equal(v, b[i]));
  return Object.is(a, b);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as the report shows it: JSON, cut to a line's worth. */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 200 ? text : `${text.slice(0, 199)}…`;
}

/** The differences as the report prints them: per place, the expected value (`-`) and the job's (`+`). */
export function diffLines(found: readonly Difference[]): string[] {
  return found.flatMap((d) => [`${d.path}:`, `  - expected ${d.expected}`, `  + got      ${d.actual}`]);
}
