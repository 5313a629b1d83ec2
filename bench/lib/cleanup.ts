/**
 * Everything the benchmarks start registers how to stop it here, so that an error or Ctrl-C in
 * the middle of a benchmark still stops every daemon and engine and removes every temp folder.
 */
type CleanupFn = () => Promise<void>;

const pending = new Set<CleanupFn>();

/** Registers a cleanup action; returns a function that unregisters it (call once it has run). */
export function onCleanup(fn: CleanupFn): () => void {
  pending.add(fn);
  return () => pending.delete(fn);
}

/** Runs every registered action (latest first), each at most once, ignoring their errors. */
export async function cleanupAll(): Promise<void> {
  const fns = [...pending].reverse();
  pending.clear();
  for (const fn of fns) await fn().catch(() => undefined);
}
