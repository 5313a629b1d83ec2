/** The environment as plain strings (a child process's env cannot hold undefined values). */
export function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * What every engine gets of the daemon's environment, by allow-list: the search path, HOME, the
 * locale and time zone, the terminal type, `IS_SANDBOX`; and what `sandbox.pass_env` names (a
 * name ending in `*` takes every name it begins). Nothing else: not a store's URL or password
 * (`DATABASE_URL`, `PGPASSWORD`), not another engine's API key, not the daemon's own settings.
 * An engine's own `engines.<name>.env` is added to this (engines/info.ts).
 */
export const ENGINE_ENV_ALLOWED = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'LC_*', 'TZ', 'TERM', 'IS_SANDBOX'] as const;

export function engineBaseEnv(env: Readonly<Record<string, string>>, passEnv: readonly string[] = []): Record<string, string> {
  const patterns = [...ENGINE_ENV_ALLOWED, ...passEnv];
  const allowed = (name: string): boolean => patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
  return Object.fromEntries(Object.entries(env).filter(([name]) => allowed(name)));
}
