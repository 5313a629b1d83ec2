/** The environment as plain strings (a child process's env cannot hold undefined values). */
export function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * What an engine gets of the daemon's environment: all but the daemon's own settings (`SKILLD_*`:
 * a store's URL may carry a password, and the socket's path leads to every job).
 */
export function engineBaseEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('SKILLD_')));
}
