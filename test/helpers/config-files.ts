import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, loadConfig, type Config } from '../../daemon/base/config.js';

/**
 * Config files written into `dir`, one per call: `load` gives the config a file of these values
 * makes, `problem` what is wrong with it (a ConfigError's message; anything else throws); the
 * daemon's environment is `env`.
 */
export function configFiles(dir: string, env: NodeJS.ProcessEnv = {}): { load(values: Record<string, unknown>): Promise<Config>; problem(values: Record<string, unknown>): Promise<string> } {
  let files = 0;
  const load = async (values: Record<string, unknown>): Promise<Config> => {
    files += 1;
    const path = join(dir, `config-${files}.json`);
    await writeFile(path, JSON.stringify(values));
    return loadConfig({ flags: { config: path }, env, bundledSkillsDir: '/opt/skilld/skills', uid: 1234, home: '/home/alice' });
  };
  const problem = async (values: Record<string, unknown>): Promise<string> => {
    const error = await load(values).then(() => null, (caught: unknown) => caught);
    if (error instanceof ConfigError) return error.message;
    throw new Error(`expected a ConfigError, got ${String(error)}`);
  };
  return { load, problem };
}
