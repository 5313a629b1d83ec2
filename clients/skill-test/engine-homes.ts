import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAUDE_MODEL, CODEX_MODEL, codexConfigToml, GEMINI_MODEL, geminiSettings, scriptedEnv } from '../../daemon/engines/scripted-homes.js';

/**
 * Per-test homes for the real Codex, Gemini and Claude Code CLIs, pointed at a scripted model
 * server (see `model-server.ts`). Verified with @openai/codex@0.169.0, @google/gemini-cli@0.61.0
 * and @anthropic-ai/claude-code@2.1.330.
 */

/** A home folder for one engine, and what to run it with. */
export interface EngineHome {
  /** The folder (CODEX_HOME, GEMINI_CLI_HOME or CLAUDE_CONFIG_DIR); removed by `cleanup()`. */
  dir: string;
  /** Variables to add to the CLI's environment. */
  env: Record<string, string>;
  /** The model the home selects (Codex `config.toml` `model`, Gemini settings `model.name`, Claude `ANTHROPIC_MODEL`). */
  model: string;
  /**
   * Optional argv for running the CLI by hand (`-m <model>`, and `--skip-trust` for Gemini).
   * Not needed with `env`: the home already selects the model and trusts every folder.
   */
  args: string[];
  /** Removes the folder. */
  cleanup(): Promise<void>;
}

/** Where the real CLIs' entry scripts are. */
export interface RealEngineBins {
  codex: string | null;
  gemini: string | null;
  claude: string | null;
}

/** Options shared by both homes. */
export interface EngineHomeOptions {
  /** Use this folder instead of a new temp folder. */
  dir?: string;
  /** The model name sent to the server. */
  model?: string;
}

/** Options of a Gemini home. */
export interface GeminiHomeOptions extends EngineHomeOptions {
  /**
   * Set `GEMINI_CLI_TRUST_WORKSPACE=true` (default true). Without it, or `--skip-trust` in argv,
   * Gemini exits 55 in any folder not listed in `<home>/.gemini/trustedFolders.json`.
   */
  trustWorkspace?: boolean;
  /** The settings' `mcpServers`: MCP servers Gemini starts and offers the tools of. */
  mcpServers?: Record<string, unknown>;
}

export { CLAUDE_MODEL, CODEX_KEY_VAR, CODEX_MODEL, codexConfigToml, GEMINI_MODEL, geminiSettings } from '../../daemon/engines/scripted-homes.js';

/**
 * The `codex`, `gemini` and `claude` entry points under a `node_modules` folder, or null where
 * missing. Codex and Claude Code also need their platform packages (`@openai/codex-<platform>-<arch>`,
 * `@anthropic-ai/claude-code-<platform>-<arch>`, optional dependencies).
 */
export function realEngineBins(nodeModules: string): RealEngineBins {
  const codexNative = join(nodeModules, '@openai', `codex-${process.platform}-${process.arch}`);
  const claudeNative = join(nodeModules, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`);
  return {
    codex: existsSync(codexNative) ? binIfPresent(nodeModules, 'codex') : null,
    gemini: binIfPresent(nodeModules, 'gemini'),
    claude: existsSync(claudeNative) ? binIfPresent(nodeModules, 'claude') : null,
  };
}

function binIfPresent(nodeModules: string, name: string): string | null {
  const path = join(nodeModules, '.bin', name);
  return existsSync(path) ? path : null;
}

/** A fresh CODEX_HOME whose config points Codex at the model server. */
export async function makeCodexHome(serverUrl: string, options: EngineHomeOptions = {}): Promise<EngineHome> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'codex-home-')));
  const model = options.model ?? CODEX_MODEL;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.toml'), codexConfigToml(serverUrl, model));
  const env = scriptedEnv('codex', serverUrl, dir, model);
  return { dir, env, model, args: ['-m', model], cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A fresh GEMINI_CLI_HOME whose settings point Gemini at the model server. */
export async function makeGeminiHome(serverUrl: string, options: GeminiHomeOptions = {}): Promise<EngineHome> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'gemini-home-')));
  const model = options.model ?? GEMINI_MODEL;
  await mkdir(join(dir, '.gemini'), { recursive: true });
  const settings = { ...geminiSettings(model), ...(options.mcpServers === undefined ? {} : { mcpServers: options.mcpServers }) };
  await writeFile(join(dir, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  const env = scriptedEnv('gemini', serverUrl, dir, model);
  if (options.trustWorkspace ?? true) env['GEMINI_CLI_TRUST_WORKSPACE'] = 'true';
  return { dir, env, model, args: ['-m', model, '--skip-trust'], cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh CLAUDE_CONFIG_DIR, with the environment that points Claude Code at the model server and
 * keeps it off the network otherwise. Tools run unasked (`--dangerously-skip-permissions`) only
 * outside root, unless IS_SANDBOX=1 says the machine is a sandbox: tests running as root set it.
 */
export async function makeClaudeHome(serverUrl: string, options: EngineHomeOptions = {}): Promise<EngineHome> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'claude-home-')));
  const model = options.model ?? CLAUDE_MODEL;
  await mkdir(dir, { recursive: true });
  const env = scriptedEnv('claude', serverUrl, dir, model);
  return { dir, env, model, args: [`--model=${model}`], cleanup: () => rm(dir, { recursive: true, force: true }) };
}
