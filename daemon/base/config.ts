import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseDuration } from '../../rpc/duration.js';
import { MAX_TIMEOUT_SEC } from '../../rpc/methods.js';
import { ENGINE_NAMES, type EngineName } from '../model/job.js';
import { validateAccess, type AccessConfig } from './config-access.js';
import { DEFAULT_NETWORK, validateEngineNetwork, validateGateway, validateNetwork, type GatewayConfig, type NetworkConfig } from './config-network.js';
import type { AllowEntry } from './allow-entry.js';
import { unsetNotifySecret, validateNotify, type NotifyHook } from './config-notify.js';
import { DEFAULT_LIMITS, sandboxPaths, validateLimits, validateSandbox, type Limits, type SandboxConfig, type SandboxPaths } from './config-sandbox.js';

export { NETWORK_MODES, type GatewayConfig, type NetworkConfig, type NetworkMode } from './config-network.js';
export { SANDBOX_MODES, type Limits, type SandboxConfig, type SandboxMode, type SandboxPaths } from './config-sandbox.js';

export const PROFILE_CHOICES = ['probe', 'resumable', 'sticky_process'] as const;
/** What happens to a waiting sticky job whose live process is lost (docs/engines.md, "Live sessions"). */
export const STICKY_RECOVERY_CHOICES = ['fail', 'resume'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
/** How log lines look: `auto` is `pretty` when stdout is a terminal, else `json` (docs/configuration.md, "log_format"). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
/** How engine processes are held together and stopped (docs/engines.md, "Containment"). */
export const CONTAINMENT_CHOICES = ['auto', 'cgroup', 'process_group'] as const;
export const ENGINES_ON_STOP = ['keep', 'stop'] as const;
export interface EngineConfig {
  command: string[];
  env: Record<string, string>;
  profile: (typeof PROFILE_CHOICES)[number];
  sticky_recovery: (typeof STICKY_RECOVERY_CHOICES)[number];
  sandbox: SandboxPaths;
  /** Where its jobs may connect besides its provider's hosts (docs/network.md). */
  network: { allow: AllowEntry[] };
  /** The model gateway in front of its provider (docs/network.md); null: the engine calls its provider itself. */
  gateway: GatewayConfig | null;
}

/** Which finished jobs the daemon removes, and how often it looks (docs/retention.md). Durations in ms; null: no limit. */
export interface RetentionConfig {
  max_age_ms: number | null;
  max_jobs: number | null;
  interval_ms: number;
}

export interface Config {
  socket: string;
  socket_mode: number;
  state_dir: string;
  /** Where jobs are kept: `files` (under state_dir) or a PostgreSQL URL shared by several daemons (docs/cluster.md). */
  store: string;
  /** This daemon's name among those sharing a store; unique per daemon. */
  host_id: string;
  /** How long a host of a shared store counts as alive after its last renewal; it renews every third of it. */
  lease_ttl_ms: number;
  /** How long jobs whose session is on a gone host wait for it before they fail with HOST_LOST. */
  pinned_grace_sec: number;
  skills_dirs: string[];
  max_concurrent: number;
  max_queue: number;
  max_connections: number;
  /** A request line must end this long after its first byte. */
  line_timeout_sec: number;
  /** A connection with nothing in progress is closed after this long; 0: never. */
  idle_timeout_sec: number;
  session_timeout_sec: number;
  hard_timeout_sec: number;
  kill_grace_ms: number;
  log_level: (typeof LOG_LEVELS)[number];
  log_format: (typeof LOG_FORMATS)[number];
  process_containment: (typeof CONTAINMENT_CHOICES)[number];
  /** What a stop of the daemon does to engine processes: `keep` leaves them to their keepers, to be taken up at the next start; `stop` ends them (docs/restarts.md). */
  engines_on_stop: (typeof ENGINES_ON_STOP)[number];
  /** The sandbox of each job (docs/sandbox.md). */
  sandbox: SandboxConfig;
  /** What one job may use (docs/sandbox.md, "Limits"); a skill's runner.json may lower them. */
  limits: Limits;
  /** A job's network (docs/network.md). */
  network: NetworkConfig;
  /** Who may see and act on which jobs (docs/access.md). */
  access: AccessConfig;
  retention: RetentionConfig;
  /** Webhooks told when a job waits or ends (docs/notify.md). */
  notify: NotifyHook[];
  engines: Record<EngineName, EngineConfig>;
  /** The engine a job runs on when `jobs/create` names none and its skill runs on it; null: the skill's first (docs/configuration.md). */
  default_engine: EngineName | null;
  /** The config file read at start, if any (not a key): jobs' sandboxes hide it. */
  config_file: string | null;
  /**
   * The skills folder the daemon chose itself (not a key): `$XDG_DATA_HOME/skilld/skills` when no
   * skills_dirs were given. It alone is created when missing; a folder someone named is reported.
   */
  own_skills_dir: string | null;
}

/** A configuration problem; the message names the key and the source. Start-up stops on it. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** What the daemon was started with: parsed flags, the environment and a few facts of the host. */
export interface ConfigSources {
  flags: Partial<Pick<Config, 'socket' | 'state_dir' | 'skills_dirs' | 'log_level' | 'log_format'>> & { config?: string };
  env: NodeJS.ProcessEnv;
  bundledSkillsDir: string;
  uid: number;
  home: string;
}

type Raw = Record<string, unknown>;

/**
 * The config file read when neither `--config` nor `SKILLD_CONFIG` names one:
 * `$XDG_CONFIG_HOME/skilld/config.json`, else `~/.config/skilld/config.json`. It may be absent.
 */
export function defaultConfigPath(env: NodeJS.ProcessEnv, home: string): string {
  return join(env['XDG_CONFIG_HOME'] || join(home, '.config'), 'skilld', 'config.json');
}

/** Flags > environment > config file > defaults. Throws ConfigError on any bad value. */
export async function loadConfig(sources: ConfigSources): Promise<Config> {
  const { flags, env } = sources;
  const named = flags.config ?? env['SKILLD_CONFIG'];
  const file = named !== undefined && named !== '' ? await readConfigFile(named, true) : await readConfigFile(defaultConfigPath(env, sources.home), false);
  const fromEnv: Raw = {};
  if (env['SKILLD_SOCKET']) fromEnv['socket'] = env['SKILLD_SOCKET'];
  if (env['SKILLD_STATE_DIR']) fromEnv['state_dir'] = env['SKILLD_STATE_DIR'];
  if (env['SKILLD_STORE']) fromEnv['store'] = env['SKILLD_STORE'];
  if (env['SKILLD_HOST_ID']) fromEnv['host_id'] = env['SKILLD_HOST_ID'];
  if (env['SKILLD_SKILLS_DIRS']) fromEnv['skills_dirs'] = env['SKILLD_SKILLS_DIRS'].split(':').filter((d) => d !== '');
  if (env['SKILLD_LOG_LEVEL']) fromEnv['log_level'] = env['SKILLD_LOG_LEVEL'];
  if (env['SKILLD_LOG_FORMAT']) fromEnv['log_format'] = env['SKILLD_LOG_FORMAT'];
  const overrides = { ...fromEnv, ...stripUndefined(flags) };
  delete overrides['config'];
  const merged: Raw = { ...defaults(sources), ...file.values, ...overrides };
  const fromFile = new Set(Object.keys(file.values).filter((key) => !(key in overrides)));
  const config = validate(merged, file.values, fromFile, file.path);
  checkGateways(config, env, fromFile.has('engines') ? file.path : null);
  const unset = unsetNotifySecret(config.notify, env);
  if (unset !== null) throw new ConfigError(`${unset}${file.path === null ? '' : ` (config file ${file.path})`}`);
  const given = 'skills_dirs' in file.values || 'skills_dirs' in overrides;
  return { ...config, own_skills_dir: given ? null : (config.skills_dirs[0] ?? null) };
}

function defaults(sources: ConfigSources): Raw {
  const { env, uid, home, bundledSkillsDir } = sources;
  const runtime = env['XDG_RUNTIME_DIR'];
  const dataHome = env['XDG_DATA_HOME'] || join(home, '.local', 'share');
  return {
    socket: runtime ? join(runtime, 'skilld', 'skilld.sock') : `/tmp/skilld-${uid}/skilld.sock`,
    socket_mode: '0600',
    state_dir: join(env['XDG_STATE_HOME'] || join(home, '.local', 'state'), 'skilld'),
    store: 'files',
    host_id: hostname(),
    lease_ttl_ms: 15_000,
    pinned_grace_sec: 900,
    skills_dirs: [join(dataHome, 'skilld', 'skills'), bundledSkillsDir],
    max_concurrent: 4,
    max_queue: 128,
    max_connections: 64,
    line_timeout_sec: 30,
    idle_timeout_sec: 600,
    session_timeout_sec: 1200,
    hard_timeout_sec: 3600,
    kill_grace_ms: 5000,
    log_level: 'info',
    log_format: 'auto',
    process_containment: 'auto',
    engines_on_stop: 'keep',
    sandbox: 'preferred',
  };
}

/** A named file must exist; the default one may be absent (ENOENT), but if it is there it must be good. */
async function readConfigFile(path: string, required: boolean): Promise<{ values: Raw; path: string | null }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (!required && (error as NodeJS.ErrnoException).code === 'ENOENT') return { values: {}, path: null };
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  return { values: values as Raw, path };
}

/** sun_path is 108 bytes on Linux, the last one for the terminating NUL. */
export const SOCKET_PATH_MAX_BYTES = 107;

/** A host id names the daemon in the shared store and in log lines: short, no spaces. */
const HOST_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** The longest `kill_grace_ms`, an hour: a stop (of a job, of the daemon) waits this long at most before SIGKILL. */
export const MAX_KILL_GRACE_MS = 60 * 60 * 1000;

/**
 * The longest `lease_ttl_ms`, a day: a host silent that long is gone. A third of it bounds
 * PostgreSQL's `lock_timeout` and `idle_in_transaction_session_timeout`, which take at most 2^31-1 ms.
 */
export const MAX_LEASE_TTL_MS = 24 * 60 * 60 * 1000;

/** The longest `line_timeout_sec` and `idle_timeout_sec`, a day. */
export const MAX_CONNECTION_TIMEOUT_SEC = 24 * 60 * 60;

const KEYS = ['socket', 'socket_mode', 'state_dir', 'store', 'host_id', 'lease_ttl_ms', 'pinned_grace_sec', 'skills_dirs', 'max_concurrent', 'max_queue', 'max_connections', 'line_timeout_sec', 'idle_timeout_sec', 'session_timeout_sec', 'hard_timeout_sec', 'kill_grace_ms', 'log_level', 'log_format', 'process_containment', 'engines_on_stop', 'sandbox', 'limits', 'network', 'access', 'retention', 'notify', 'engines', 'default_engine'];

function validate(raw: Raw, fileValues: Raw, fromFile: ReadonlySet<string>, filePath: string | null): Config {
  const where = filePath === null ? '' : ` (config file ${filePath})`;
  const fail = (key: string, problem: string): never => {
    throw new ConfigError(`config key "${key}" ${problem}${fromFile.has(key.split(/[.[]/)[0] ?? key) ? where : ''}`);
  };
  for (const key of Object.keys(fileValues)) if (!KEYS.includes(key)) fail(key, 'is unknown');
  const text = (key: string): string => (typeof raw[key] === 'string' && raw[key] !== '' ? (raw[key] as string) : fail(key, 'must be a non-empty string'));
  const int = (key: string, min: number, max?: number): number => {
    const value = raw[key];
    const fits = typeof value === 'number' && Number.isInteger(value) && value >= min && (max === undefined || value <= max);
    return fits ? value : fail(key, `must be an integer >= ${min}${max === undefined ? '' : ` and <= ${max}`}`);
  };
  const modeText = text('socket_mode');
  if (!/^0?[0-7]{3}$/.test(modeText)) fail('socket_mode', 'must be an octal mode such as "0600"');
  const dirs = raw['skills_dirs'];
  if (!Array.isArray(dirs) || dirs.length === 0 || !dirs.every((d) => typeof d === 'string' && d !== '')) fail('skills_dirs', 'must be a non-empty list of paths');
  // The value given is named too: a typo is seen at once (`"Claude"`, `"cgroups"`).
  const choice = <T extends string>(key: string, choices: readonly T[]): T => (choices.includes(raw[key] as T) ? (raw[key] as T) : fail(key, `must be one of ${choices.join(', ')} (got ${JSON.stringify(raw[key])})`));
  const level = choice('log_level', LOG_LEVELS);
  const socket = resolve(text('socket'));
  // The kernel would cut a longer path short, and the daemon would listen where no client looks.
  const socketBytes = Buffer.byteLength(socket);
  if (socketBytes > SOCKET_PATH_MAX_BYTES) fail('socket', `is ${socketBytes} bytes long (${socket}); a Unix socket path holds at most ${SOCKET_PATH_MAX_BYTES}`);
  const store = text('store');
  if (store !== 'files' && !isPostgresUrl(store)) fail('store', 'must be "files" or a PostgreSQL URL (postgres://user@host/database)');
  const hostId = text('host_id');
  if (!HOST_ID.test(hostId)) fail('host_id', 'must be 1 to 255 letters, digits, dots, dashes or underscores, starting with a letter or digit');
  return {
    socket,
    socket_mode: Number.parseInt(modeText, 8),
    state_dir: resolve(text('state_dir')),
    store,
    host_id: hostId,
    lease_ttl_ms: int('lease_ttl_ms', 1000, MAX_LEASE_TTL_MS),
    pinned_grace_sec: int('pinned_grace_sec', 0, MAX_TIMEOUT_SEC),
    skills_dirs: (dirs as string[]).map((d) => resolve(d)),
    max_concurrent: int('max_concurrent', 1),
    max_queue: int('max_queue', 0),
    max_connections: int('max_connections', 1),
    line_timeout_sec: int('line_timeout_sec', 1, MAX_CONNECTION_TIMEOUT_SEC),
    idle_timeout_sec: int('idle_timeout_sec', 0, MAX_CONNECTION_TIMEOUT_SEC),
    session_timeout_sec: int('session_timeout_sec', 1, MAX_TIMEOUT_SEC),
    hard_timeout_sec: int('hard_timeout_sec', 1, MAX_TIMEOUT_SEC),
    kill_grace_ms: int('kill_grace_ms', 0, MAX_KILL_GRACE_MS),
    log_level: level,
    log_format: choice('log_format', LOG_FORMATS),
    process_containment: choice('process_containment', CONTAINMENT_CHOICES),
    engines_on_stop: choice('engines_on_stop', ENGINES_ON_STOP),
    sandbox: validateSandbox(raw['sandbox'], fail),
    limits: validateLimits(raw['limits'] ?? {}, 'limits', fail, DEFAULT_LIMITS),
    network: raw['network'] === undefined ? DEFAULT_NETWORK : validateNetwork(raw['network'], fail),
    access: validateAccess(raw['access'], fail),
    retention: validateRetention(raw['retention'] ?? {}, fail),
    notify: validateNotify(raw['notify'], fail),
    engines: validateEngines(raw['engines'] ?? {}, fail),
    default_engine: raw['default_engine'] === undefined || raw['default_engine'] === null ? null : choice('default_engine', ENGINE_NAMES),
    config_file: filePath === null ? null : resolve(filePath),
    own_skills_dir: null,
  };
}

function validateEngines(raw: unknown, fail: (key: string, problem: string) => never): Record<EngineName, EngineConfig> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('engines', 'must be an object keyed by engine name');
  const given = raw as Raw;
  for (const name of Object.keys(given)) if (!ENGINE_NAMES.includes(name as EngineName)) fail(`engines.${name}`, `is not a known engine (${ENGINE_NAMES.join(', ')})`);
  const result = {} as Record<EngineName, EngineConfig>;
  for (const name of ENGINE_NAMES) {
    const entry = (given[name] ?? {}) as Raw;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) fail(`engines.${name}`, 'must be an object');
    for (const key of Object.keys(entry)) if (!['command', 'env', 'profile', 'sticky_recovery', 'sandbox', 'network', 'gateway'].includes(key)) fail(`engines.${name}.${key}`, 'is unknown');
    const command = entry['command'] ?? [name];
    if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === 'string' && c !== '')) fail(`engines.${name}.command`, 'must be a non-empty list of strings');
    const env = entry['env'] ?? {};
    const variables = typeof env === 'object' && env !== null && !Array.isArray(env) ? Object.entries(env) : null;
    // A process environment holds neither a NUL nor, in a name, an `=`.
    if (variables === null || !variables.every(([key, v]) => typeof v === 'string' && /^[^=\0]+$/.test(key) && !v.includes('\0'))) fail(`engines.${name}.env`, 'must map names to strings (no NUL, and no = in a name)');
    const profile = entry['profile'] ?? 'probe';
    if (!PROFILE_CHOICES.includes(profile as EngineConfig['profile'])) fail(`engines.${name}.profile`, `must be one of ${PROFILE_CHOICES.join(', ')}`);
    const recovery = entry['sticky_recovery'] ?? 'fail';
    if (!STICKY_RECOVERY_CHOICES.includes(recovery as EngineConfig['sticky_recovery'])) fail(`engines.${name}.sticky_recovery`, `must be one of ${STICKY_RECOVERY_CHOICES.join(', ')}`);
    const sandbox = sandboxPaths(entry['sandbox'] ?? {}, `engines.${name}.sandbox`, fail);
    const network = validateEngineNetwork(entry['network'] ?? {}, `engines.${name}.network`, fail);
    const gateway = validateGateway(entry['gateway'], `engines.${name}.gateway`, fail);
    if (gateway !== null && name === 'iflow') fail('engines.iflow.gateway', 'is not supported: iFlow CLI has no established way to take a base URL and a key from its environment');
    result[name] = { command: command as string[], env: env as Record<string, string>, profile: profile as EngineConfig['profile'], sticky_recovery: recovery as EngineConfig['sticky_recovery'], sandbox, network, gateway };
  }
  return result;
}

/**
 * A gateway's key is read from the daemon's environment at start: one not set there stops the
 * start, not a job later. A gateway is reached through a job's own network alone, which
 * `network: "open"` gives no job.
 */
function checkGateways(config: Config, env: NodeJS.ProcessEnv, filePath: string | null): void {
  const where = filePath === null ? '' : ` (config file ${filePath})`;
  for (const name of ENGINE_NAMES) {
    const variable = config.engines[name].gateway?.api_key_env;
    if (variable === undefined) continue;
    if ((env[variable] ?? '') === '') throw new ConfigError(`config key "engines.${name}.gateway.api_key_env" names ${variable}, which is not set in the daemon's environment${where}`);
    if (config.network.mode === 'open') throw new ConfigError(`config key "engines.${name}.gateway" needs each job's own network, and "network" is "open"${where}`);
  }
}

/** The shortest `retention.interval`: a second. */
const MIN_RETENTION_INTERVAL_MS = 1000;

function validateRetention(raw: unknown, fail: (key: string, problem: string) => never): RetentionConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('retention', 'must be an object');
  const given = { max_age: '30d', max_jobs: null, interval: '1h', ...(raw as Raw) };
  for (const key of Object.keys(given)) if (!['max_age', 'max_jobs', 'interval'].includes(key)) fail(`retention.${key}`, 'is unknown');
  const duration = (key: string, value: unknown): number => {
    const ms = typeof value === 'string' ? parseDuration(value) : null;
    return ms ?? fail(`retention.${key}`, 'must be a duration with a unit, such as "30d", "12h" or "90m"');
  };
  const maxJobs = given.max_jobs;
  if (maxJobs !== null && !(Number.isSafeInteger(maxJobs) && (maxJobs as number) >= 0)) fail('retention.max_jobs', 'must be null or an integer >= 0');
  const interval = duration('interval', given.interval);
  if (interval < MIN_RETENTION_INTERVAL_MS) fail('retention.interval', 'must be at least 1s');
  return { max_age_ms: given.max_age === null ? null : duration('max_age', given.max_age), max_jobs: maxJobs as number | null, interval_ms: interval };
}

/** The form pg reads: the host may be empty, with the socket folder in `?host=`. */
function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\/\S*$/.test(text);
}

function stripUndefined(values: object): Raw {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}
