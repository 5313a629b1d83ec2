import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** The model Codex asks for. */
export const CODEX_MODEL = 'fake-model';
/** The env var named by the fake provider's `env_key`. */
export const CODEX_KEY_VAR = 'FAKE_MODEL_API_KEY';
/** The model Gemini asks for (a real model name: Gemini adapts its request to the model family). */
export const GEMINI_MODEL = 'gemini-2.5-flash';
/** The model Claude Code asks for. */
export const CLAUDE_MODEL = 'claude-sonnet-4-5';

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

/** The `config.toml` of a Codex home that talks to `serverUrl` (`http://127.0.0.1:<port>`). */
export function codexConfigToml(serverUrl: string, model: string = CODEX_MODEL): string {
  return [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "fake"',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${JSON.stringify(`${serverUrl}/v1`)}`,
    `env_key = ${JSON.stringify(CODEX_KEY_VAR)}`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[features]',
    'plugins = false',
    'unbounded_connection_retries = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}

/** A fresh CODEX_HOME whose config points Codex at the model server. */
export async function makeCodexHome(serverUrl: string, options: EngineHomeOptions = {}): Promise<EngineHome> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'codex-home-')));
  const model = options.model ?? CODEX_MODEL;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.toml'), codexConfigToml(serverUrl, model));
  // HOME too: the login shell (`bash -lc`) Codex runs its tools in then reads no profile of this
  // machine's user, which can take seconds or hang (a stale `pyenv rehash` lock does).
  const env = { HOME: dir, CODEX_HOME: dir, [CODEX_KEY_VAR]: 'fake-key', NO_COLOR: '1' };
  return { dir, env, model, args: ['-m', model], cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The `settings.json` of a Gemini home: API-key auth, no telemetry or statistics, one attempt. */
export function geminiSettings(model: string = GEMINI_MODEL): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { maxAttempts: 1, enableAutoUpdate: false, enableAutoUpdateNotification: false },
    model: { name: model },
  };
}

/** A fresh GEMINI_CLI_HOME whose settings point Gemini at the model server. */
export async function makeGeminiHome(serverUrl: string, options: GeminiHomeOptions = {}): Promise<EngineHome> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'gemini-home-')));
  const model = options.model ?? GEMINI_MODEL;
  await mkdir(join(dir, '.gemini'), { recursive: true });
  const settings = { ...geminiSettings(model), ...(options.mcpServers === undefined ? {} : { mcpServers: options.mcpServers }) };
  await writeFile(join(dir, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  const env: Record<string, string> = {
    // See makeCodexHome: tools run in shells that read no profile of this machine's user.
    HOME: dir,
    GEMINI_CLI_HOME: dir,
    GEMINI_API_KEY: 'fake-key',
    GOOGLE_GEMINI_BASE_URL: serverUrl,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    NO_COLOR: '1',
  };
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
  const env: Record<string, string> = {
    // See makeCodexHome: tools run in shells that read no profile of this machine's user.
    HOME: dir,
    CLAUDE_CONFIG_DIR: dir,
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: 'dummy',
    ANTHROPIC_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    NO_COLOR: '1',
  };
  if (process.getuid?.() === 0) env['IS_SANDBOX'] = '1';
  return { dir, env, model, args: [`--model=${model}`], cleanup: () => rm(dir, { recursive: true, force: true }) };
}
