import { accessSync, constants, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { SCRIPTABLE_ENGINES, type ScriptableEngine } from '../../daemon/engines/scripted-homes.js';
import { BUNDLED_SKILLS, NODE_MODULES } from './paths.js';
import { realEngineBins, type RealEngineBins } from './engine-homes.js';

/** The engines `skills test` drives against its scripted model: each one's CLI takes a model address (iFlow's does not); the daemon's list. */
export const TESTABLE_ENGINES = SCRIPTABLE_ENGINES;
export type TestableEngine = ScriptableEngine;

/** Why iFlow cannot be tested offline, said whenever a case or `--engine` asks for it. */
export const IFLOW_NOT_TESTABLE = 'skills test does not support iflow: the iFlow CLI has no setting for the address of its model provider, so it cannot be pointed at the scripted model offline (use codex, gemini or claude)';

/** An engine's CLI as `skills test` runs it, and a folder its job's sandbox must show (its install). */
export interface EngineCommand {
  command: string[];
  /** Where the command was found: `config` (engines.<name>.command), `package` (skilld's pinned dev dependency) or `path`. */
  source: 'config' | 'package' | 'path';
  readOnly: string[];
}

/** What the user's skilld configuration names: each engine's command, the skills folders; the defaults when it cannot be read. */
export interface UserSetup {
  commands: Partial<Record<string, string[]>>;
  skillsDirs: string[];
  /** Why the configuration could not be read, or null. */
  problem: string | null;
}

/**
 * Reads the configuration the daemon would read (SKILLD_CONFIG, else the default file; SKILLD_*
 * variables). Its loader (the daemon's, with its schema compiler: ~35 ms to load) is loaded here,
 * when asked: cases on a running daemon need nothing of it.
 */
export async function readUserSetup(env: NodeJS.ProcessEnv = process.env): Promise<UserSetup> {
  try {
    const { loadConfig } = await import('../../daemon/base/config.js');
    const config = await loadConfig({ flags: {}, env, bundledSkillsDir: BUNDLED_SKILLS, uid: process.getuid?.() ?? 0, home: homedir() });
    const commands = Object.fromEntries(Object.entries(config.engines).map(([name, engine]) => [name, engine.command]));
    return { commands, skillsDirs: config.skills_dirs, problem: null };
  } catch (error) {
    return { commands: {}, skillsDirs: [BUNDLED_SKILLS], problem: (error as Error).message };
  }
}

/**
 * The CLI to run `engine` with: the command the configuration names, when it names one other than
 * the bare engine name (the daemon's default); else the CLI pinned in skilld's own node_modules
 * (a checkout's dev dependency, the version the scripted model is checked against); else the bare
 * name, found on the PATH. Null when none is there.
 */
export function engineCommand(engine: TestableEngine, setup: UserSetup, bins: RealEngineBins = realEngineBins(NODE_MODULES), pathVar = process.env['PATH'] ?? ''): EngineCommand | null {
  const configured = setup.commands[engine];
  if (configured !== undefined && !(configured.length === 1 && configured[0] === engine)) return { command: configured, source: 'config', readOnly: [] };
  const pinned = bins[engine];
  if (pinned !== null) return { command: [pinned], source: 'package', readOnly: [NODE_MODULES] };
  const found = onPath(engine, pathVar);
  return found === null ? null : { command: [found], source: 'path', readOnly: [installFolder(found)] };
}

function onPath(name: string, pathVar: string): string | null {
  for (const dir of pathVar.split(delimiter).filter((d) => d !== '')) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

/** The folder of the program a PATH entry leads to (an npm-installed CLI is a link into its package). */
function installFolder(path: string): string {
  try {
    return dirname(realpathSync(path));
  } catch {
    return dirname(path);
  }
}
