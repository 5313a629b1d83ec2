import { parseAllowEntry, type AllowEntry } from './allow-entry.js';

/** A job's network (docs/network.md): `isolated`, its own namespace whose one way out is the daemon's proxy; `open`, the host's network. */
export const NETWORK_MODES = ['isolated', 'open'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/** `network` in the config: a mode alone (`"open"`), or an object with the mode and what every job may reach. */
export interface NetworkConfig {
  /** null: not given, which is `isolated` wherever the sandbox runs and `open` (said at start) where it does not. */
  mode: NetworkMode | null;
  /** Where every job of every engine may connect, besides each engine's own hosts. */
  allow: AllowEntry[];
  /** Whether a skill's `network.allow` (runner.json) adds to its jobs' allow-list. */
  skills_may_allow: boolean;
  /** What leads a job's loopback to the daemon (sandbox/network-bridge.ts): `auto`, socat where the system has it, else node. */
  bridge: NetworkBridge;
}

/** The bridges of `network.bridge`. */
export const NETWORK_BRIDGES = ['auto', 'socat', 'node'] as const;
export type NetworkBridge = (typeof NETWORK_BRIDGES)[number];

type Fail = (key: string, problem: string) => never;
type Raw = Record<string, unknown>;

export const DEFAULT_NETWORK: NetworkConfig = { mode: null, allow: [], skills_may_allow: true, bridge: 'auto' };

export function validateNetwork(raw: unknown, fail: Fail): NetworkConfig {
  if (raw === undefined) return DEFAULT_NETWORK;
  if (typeof raw === 'string') return { ...DEFAULT_NETWORK, mode: networkMode(raw, 'network', fail) };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('network', `must be one of ${NETWORK_MODES.join(', ')}, or an object`);
  const given = raw as Raw;
  for (const key of Object.keys(given)) if (!['mode', 'allow', 'skills_may_allow', 'bridge'].includes(key)) fail(`network.${key}`, 'is unknown');
  const mayAllow = given['skills_may_allow'] ?? true;
  if (typeof mayAllow !== 'boolean') fail('network.skills_may_allow', 'must be true or false');
  const bridge = given['bridge'] ?? 'auto';
  if (typeof bridge !== 'string' || !(NETWORK_BRIDGES as readonly string[]).includes(bridge)) fail('network.bridge', `must be one of ${NETWORK_BRIDGES.join(', ')}, not ${JSON.stringify(bridge)}`);
  return { mode: given['mode'] === undefined ? null : networkMode(given['mode'], 'network.mode', fail), allow: allowList(given['allow'] ?? [], 'network.allow', fail), skills_may_allow: mayAllow as boolean, bridge: bridge as NetworkBridge };
}

/**
 * `engines.<name>.gateway` (docs/network.md, "The model gateway"): the daemon is the engine's
 * model endpoint, passes each call on to `upstream` with the key read from its own environment
 * variable `api_key_env`, and retries a provider's 429, 503 and 529 for up to `retry_max_sec`.
 */
export interface GatewayConfig {
  /** The provider's base URL, `http(s)://host[:port][/path]`, without a trailing slash. */
  upstream: string;
  api_key_env: string;
  retry_max_sec: number;
}

/** How long the gateway retries one call a provider limits, unless the config says otherwise. */
export const DEFAULT_RETRY_MAX_SEC = 120;
const MAX_RETRY_MAX_SEC = 3600;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function validateGateway(raw: unknown, key: string, fail: Fail): GatewayConfig | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) fail(key, 'must be an object with upstream and api_key_env');
  const given = raw as Raw;
  for (const name of Object.keys(given)) if (!['upstream', 'api_key_env', 'retry_max_sec'].includes(name)) fail(`${key}.${name}`, 'is unknown');
  const upstream = upstreamUrl(given['upstream'], `${key}.upstream`, fail);
  const variable = given['api_key_env'];
  if (typeof variable !== 'string' || !VARIABLE_NAME.test(variable)) fail(`${key}.api_key_env`, 'must name an environment variable of the daemon (letters, digits and _)');
  const retry = given['retry_max_sec'] ?? DEFAULT_RETRY_MAX_SEC;
  if (!Number.isSafeInteger(retry) || (retry as number) < 0 || (retry as number) > MAX_RETRY_MAX_SEC) fail(`${key}.retry_max_sec`, `must be an integer from 0 to ${MAX_RETRY_MAX_SEC}`);
  return { upstream, api_key_env: variable as string, retry_max_sec: retry as number };
}

function upstreamUrl(raw: unknown, key: string, fail: Fail): string {
  const problem = 'must be an http:// or https:// URL with a host and no user, query or fragment';
  if (typeof raw !== 'string') return fail(key, problem);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(key, problem);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.hostname === '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') fail(key, problem);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** `engines.<name>.network`: `{allow: [...]}`. */
export function validateEngineNetwork(raw: unknown, key: string, fail: Fail): { allow: AllowEntry[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(key, 'must be an object with an allow list');
  const given = raw as Raw;
  for (const name of Object.keys(given)) if (name !== 'allow') fail(`${key}.${name}`, 'is unknown');
  return { allow: allowList(given['allow'] ?? [], `${key}.allow`, fail) };
}

/** A list of allow entries (`host:port`, `*.domain:port`); a bad one is named with what is wrong. */
export function allowList(raw: unknown, key: string, fail: Fail): AllowEntry[] {
  const problem = allowListProblem(raw);
  if (typeof problem === 'string') fail(key, problem);
  return problem as AllowEntry[];
}

/** The entries of a list, or what is wrong with it (a skill's `network.allow` uses the same words). */
export function allowListProblem(raw: unknown): AllowEntry[] | string {
  if (!Array.isArray(raw)) return 'must be a list of host:port or *.domain:port entries';
  const entries: AllowEntry[] = [];
  for (const item of raw) {
    const entry = parseAllowEntry(item);
    if ('problem' in entry) return `has ${JSON.stringify(item)}, which ${entry.problem}`;
    entries.push(entry);
  }
  return entries;
}

function networkMode(raw: unknown, key: string, fail: Fail): NetworkMode {
  return NETWORK_MODES.includes(raw as NetworkMode) ? (raw as NetworkMode) : fail(key, `must be one of ${NETWORK_MODES.join(', ')}`);
}
