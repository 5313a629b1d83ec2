import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllowEntry, type AllowEntry } from '../base/allow-entry.js';
import type { EngineName } from '../model/job.js';

/**
 * Where each engine's own calls go (docs/network.md, "Each engine's hosts"): its provider's API
 * with a key, and the hosts of its login (OAuth) where it has one. Found in each CLI's shipped
 * code and its documentation; telemetry and update hosts are left out on purpose.
 */
export const ENGINE_HOSTS: Readonly<Record<EngineName, readonly string[]>> = {
  codex: ['api.openai.com:443', 'chatgpt.com:443', 'auth.openai.com:443'],
  gemini: ['generativelanguage.googleapis.com:443', 'cloudcode-pa.googleapis.com:443', 'oauth2.googleapis.com:443', 'accounts.google.com:443'],
  claude: ['api.anthropic.com:443', 'claude.ai:443', 'platform.claude.com:443'],
  iflow: ['apis.iflow.cn:443', 'iflow.cn:443'],
};

/** The variables each engine reads its model endpoint from. */
const BASE_URL_VARIABLES: Readonly<Record<EngineName, readonly string[]>> = {
  codex: ['OPENAI_BASE_URL'],
  gemini: ['GOOGLE_GEMINI_BASE_URL', 'GOOGLE_VERTEX_BASE_URL', 'CODE_ASSIST_ENDPOINT'],
  claude: ['ANTHROPIC_BASE_URL'],
  iflow: ['IFLOW_BASE_URL', 'IFLOW_baseUrl'],
};

/** A `base_url` in Codex's config.toml (a model provider's) or in a `-c model_providers.<id>.base_url=` of its command. */
const CODEX_BASE_URL = /(?:^|\.)base_url\s*=\s*["']?([^"'\s]+)/gm;

/**
 * What an engine's jobs may always reach: its provider's hosts, and the host of each model
 * endpoint its configuration names (a variable of its environment `env`, Codex's `config.toml`
 * or its command), so that a configured local model server or company gateway just works.
 */
export function engineAllowEntries(engine: EngineName, env: Readonly<Record<string, string>>, command: readonly string[]): AllowEntry[] {
  const urls = BASE_URL_VARIABLES[engine].map((name) => env[name]).filter((value): value is string => value !== undefined && value !== '');
  if (engine === 'codex') urls.push(...codexBaseUrls(env, command));
  const entries = [...ENGINE_HOSTS[engine], ...urls.map(hostPortOf).filter((one): one is string => one !== null)].map(parseAllowEntry);
  return entries.filter((entry): entry is AllowEntry => !('problem' in entry));
}

/** The `host:port` of a URL, its scheme's port when it names none; null when it is not an http(s) URL. */
export function hostPortOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  return `${parsed.hostname}:${parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : parsed.port}`;
}

function codexBaseUrls(env: Readonly<Record<string, string>>, command: readonly string[]): string[] {
  const home = env['CODEX_HOME'] ?? (env['HOME'] === undefined ? null : join(env['HOME'], '.codex'));
  let toml = '';
  try {
    if (home !== null) toml = readFileSync(join(home, 'config.toml'), 'utf8');
  } catch {
    // No config file: the default provider alone.
  }
  return [...`${toml}\n${command.join('\n')}`.matchAll(CODEX_BASE_URL)].map((match) => match[1] ?? '');
}
