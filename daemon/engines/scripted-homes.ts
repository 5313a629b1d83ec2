import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineName } from '../model/job.js';

/**
 * An engine's home pointed at a scripted model server (`skillctl skills test`, docs/skills.md):
 * its settings name the server as the model provider, with a key that means nothing, no
 * telemetry and no retries. Verified with @openai/codex@0.169.0, @google/gemini-cli@0.61.0 and
 * @anthropic-ai/claude-code@2.1.330. iFlow CLI has no setting for its provider's address.
 */

/** The engines a scripted model can stand behind. */
export const SCRIPTABLE_ENGINES = ['codex', 'gemini', 'claude'] as const;
export type ScriptableEngine = (typeof SCRIPTABLE_ENGINES)[number];

export function isScriptable(engine: EngineName): engine is ScriptableEngine {
  return (SCRIPTABLE_ENGINES as readonly string[]).includes(engine);
}

/** The model Codex asks for. */
export const CODEX_MODEL = 'fake-model';
/** The env var named by the scripted provider's `env_key`. */
export const CODEX_KEY_VAR = 'FAKE_MODEL_API_KEY';
/** The model Gemini asks for (a real model name: Gemini adapts its request to the model family). */
export const GEMINI_MODEL = 'gemini-2.5-flash';
/** The model Claude Code asks for. */
export const CLAUDE_MODEL = 'claude-sonnet-4-5';

export const SCRIPTED_MODELS: Readonly<Record<ScriptableEngine, string>> = { codex: CODEX_MODEL, gemini: GEMINI_MODEL, claude: CLAUDE_MODEL };

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

/**
 * The environment that points an engine at `serverUrl` with its home in `dir`. HOME is the home
 * too: the shells an engine runs its tools in then read no profile of the machine's user, which
 * can take seconds or hang (a stale `pyenv rehash` lock does).
 */
export function scriptedEnv(engine: ScriptableEngine, serverUrl: string, dir: string, model: string = SCRIPTED_MODELS[engine]): Record<string, string> {
  switch (engine) {
    case 'codex':
      return { HOME: dir, CODEX_HOME: dir, [CODEX_KEY_VAR]: 'fake-key', NO_COLOR: '1' };
    case 'gemini':
      return { HOME: dir, GEMINI_CLI_HOME: dir, GEMINI_API_KEY: 'fake-key', GOOGLE_GEMINI_BASE_URL: serverUrl, GEMINI_CLI_NO_RELAUNCH: 'true', NO_COLOR: '1' };
    case 'claude': {
      const env: Record<string, string> = {
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
      // Tools run unasked (--dangerously-skip-permissions) as root only where IS_SANDBOX=1 says the machine is one.
      if (process.getuid?.() === 0) env['IS_SANDBOX'] = '1';
      return env;
    }
  }
}

/** The settings files of such a home, by path below it. */
export function scriptedHomeFiles(engine: ScriptableEngine, serverUrl: string, model: string = SCRIPTED_MODELS[engine]): Record<string, string> {
  switch (engine) {
    case 'codex':
      return { 'config.toml': codexConfigToml(serverUrl, model) };
    case 'gemini':
      return { '.gemini/settings.json': `${JSON.stringify(geminiSettings(model), null, 2)}\n` };
    case 'claude':
      return {};
  }
}

/**
 * Writes the home in `dir` (a folder of the daemon's that no job writes) and returns the
 * environment that uses it. Synchronous: a turn's process is spawned without waiting (the files
 * are a few hundred bytes).
 */
export function writeScriptedHome(engine: ScriptableEngine, serverUrl: string, dir: string): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(scriptedHomeFiles(engine, serverUrl))) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return scriptedEnv(engine, serverUrl, dir);
}
