/** Wall-clock time in epoch milliseconds with sub-millisecond resolution (monotonic within this process). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The environment given to every process the benchmarks start (the daemon, and through it the
 * fake engines; direct spawns too). Coverage collection is dropped, and NODE_EXTRA_CA_CERTS too:
 * on the benchmark machine loading that bundle costs ~70 ms of CPU at every Node start, which
 * would only slow down every fake-engine start (daemon and direct baselines alike).
 */
export function benchEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key === 'NODE_V8_COVERAGE' || key === 'NODE_EXTRA_CA_CERTS') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs `fn` over `items` with at most `concurrency` calls in flight; rejects on the first failure. */
export async function runPool<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failed: unknown = null;
  const worker = async (): Promise<void> => {
    while (failed === null && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T, index);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, () => worker()));
  if (failed !== null) throw failed;
  return results;
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

export function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
