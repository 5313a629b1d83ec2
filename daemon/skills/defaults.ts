/**
 * What `jobs/create` chooses when a request leaves it out (docs/protocol.md, "jobs/create"): the
 * engine, and the mode. Shown with each skill (`default_engine`), so that clients offer the same.
 */

/**
 * The engine a job of a skill runs on when none is named: the configured `default_engine` where
 * the skill runs on it, else the skill's first engine (the order of its runner.json); null for a
 * skill that runs on none.
 */
export function defaultEngine<E extends string>(effectiveEngines: readonly E[], configured: E | null): E | null {
  if (configured !== null && effectiveEngines.includes(configured)) return configured;
  return effectiveEngines[0] ?? null;
}

/** The mode a job of a skill runs in when none is named: its only one, else `auto`. */
export function defaultMode<M extends string>(executionModes: readonly M[]): M | 'auto' {
  const [only, ...others] = executionModes;
  return only !== undefined && others.length === 0 ? only : 'auto';
}
