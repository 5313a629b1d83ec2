/**
 * What `jobs/create` chooses when a request leaves it out (docs/protocol.md, "jobs/create"): the
 * engine, and the mode. Shown with each skill (`default_engine`), so that clients offer the same.
 */

/**
 * The engine a job of a skill runs on when none is named: the configured `default_engine` where
 * the skill runs on it, else the skill's first engine: the first of its runner.json `engines` it
 * runs on (that list's order, not the daemon's), else the first of its effective engines (the
 * daemon's order: codex, gemini, iflow, claude); null for a skill that runs on none.
 */
export function defaultEngine<E extends string>(skill: { readonly engines: readonly string[] | null; readonly effective_engines: readonly E[] }, configured: E | null): E | null {
  const runs = skill.effective_engines;
  if (configured !== null && runs.includes(configured)) return configured;
  const listed = skill.engines?.find((name): name is E => runs.includes(name as E));
  return listed ?? runs[0] ?? null;
}

/** The mode a job of a skill runs in when none is named: its only one, else `auto`. */
export function defaultMode<M extends string>(executionModes: readonly M[]): M | 'auto' {
  const [only, ...others] = executionModes;
  return only !== undefined && others.length === 0 ? only : 'auto';
}
