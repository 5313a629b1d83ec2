/** Summary statistics of latency samples (milliseconds, or any unit). */
export interface Summary {
  n: number;
  min: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array: the smallest sample with at least p% of samples at or below it. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = n === 0 ? Number.NaN : sorted.reduce((sum, x) => sum + x, 0) / n;
  return { n, min: sorted[0] ?? Number.NaN, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean, max: sorted[n - 1] ?? Number.NaN };
}

export function median(samples: readonly number[]): number {
  return percentile([...samples].sort((a, b) => a - b), 50);
}

/** A number with a precision that suits its size: 0.071, 1.37, 42.5, 1830. */
export function fmt(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs === 0) return '0';
  if (abs < 1) return value.toFixed(3);
  if (abs < 10) return value.toFixed(2);
  if (abs < 1000) return value.toFixed(1);
  return value.toFixed(0);
}

export function fmtSummary(s: Summary, unit = 'ms'): string {
  return `p50 ${fmt(s.p50)} ${unit}, p99 ${fmt(s.p99)} ${unit}, mean ${fmt(s.mean)} ${unit}, max ${fmt(s.max)} ${unit} (n=${s.n})`;
}
