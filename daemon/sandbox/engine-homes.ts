import { join } from 'node:path';
import type { EngineName } from '../model/job.js';

/**
 * Where an engine keeps its settings, credentials and sessions, and which of its files a job's
 * own home shares with the configured one (docs/sandbox.md, "Engine homes"). Decided from the
 * CLIs' own documentation and behaviour (Codex 0.169, Gemini CLI 0.61, Claude Code 2.1.330; iFlow CLI as the Gemini CLI it forks).
 */
interface HomeRule {
  /** The variable that names its base folder, when the engine has one; else the base is HOME. */
  variable: string | null;
  /** Its home below the base; '' for the base itself. */
  below: string;
  /** Read, never written by a run: shown read-only. */
  settings: readonly string[];
  /** Written when a login is refreshed: shown read and written, so that a refresh reaches every job. */
  credentials: readonly string[];
  /** State it rewrites whole as it runs: copied into the job's home when that is made. */
  copied: readonly string[];
  /** Like `copied`, but kept in HOME beside the home folder unless the variable names one. */
  copiedBeside: readonly string[];
}

const RULES: Readonly<Record<EngineName, HomeRule>> = {
  // CODEX_HOME, else ~/.codex. Sessions (what `exec resume` reads) go to sessions/, the job's own.
  codex: { variable: 'CODEX_HOME', below: '', settings: ['config.toml', 'AGENTS.md', 'AGENTS.override.md', 'prompts', 'rules'], credentials: ['auth.json'], copied: ['models_cache.json'], copiedBeside: [] },
  // GEMINI_CLI_HOME (else HOME) holds .gemini. Chats go to tmp/<project>/chats, the job's own.
  gemini: {
    variable: 'GEMINI_CLI_HOME',
    below: '.gemini',
    settings: ['settings.json', 'GEMINI.md', 'trustedFolders.json', '.env', 'commands', 'extensions'],
    credentials: ['oauth_creds.json', 'google_accounts.json', 'mcp-oauth-tokens.json'],
    copied: ['installation_id'],
    copiedBeside: [],
  },
  // A fork of Gemini CLI without the variable.
  iflow: { variable: null, below: '.iflow', settings: ['settings.json', 'IFLOW.md', '.env', 'commands'], credentials: ['oauth_creds.json', 'iflow_accounts.json'], copied: [], copiedBeside: [] },
  // CLAUDE_CONFIG_DIR, else ~/.claude with ~/.claude.json beside it (onboarding, per-project state).
  // Sessions go to projects/, the job's own.
  claude: { variable: 'CLAUDE_CONFIG_DIR', below: '', settings: ['settings.json', 'CLAUDE.md', 'agents', 'commands', 'skills'], credentials: ['.credentials.json'], copied: [], copiedBeside: ['.claude.json'] },
};

/** The home folder without the variable, relative to HOME. */
const FALLBACK: Readonly<Record<EngineName, string>> = { codex: '.codex', gemini: '.gemini', iflow: '.iflow', claude: '.claude' };

/** An engine's home as it finds it from the environment it runs with (`engines.<name>.env` may point it elsewhere). */
export interface EngineHome {
  /** HOME as the engine has it. */
  home: string;
  /** Its home folder. */
  folder: string;
  /** Absolute paths of its files, by how a job's own home shares them. */
  settings: string[];
  credentials: string[];
  copied: string[];
}

export function engineHome(engine: EngineName, env: Readonly<Record<string, string>>, daemonHome: string): EngineHome {
  const rule = RULES[engine];
  const home = env['HOME'] ?? daemonHome;
  const named = rule.variable === null ? undefined : env[rule.variable];
  const folder = named !== undefined && named !== '' ? join(named, rule.below) : join(home, FALLBACK[engine]);
  const inFolder = (names: readonly string[]): string[] => names.map((name) => join(folder, name));
  const beside = named !== undefined && named !== '' ? inFolder(rule.copiedBeside) : rule.copiedBeside.map((name) => join(home, name));
  return { home, folder, settings: inFolder(rule.settings), credentials: inFolder(rule.credentials), copied: [...inFolder(rule.copied), ...beside] };
}

