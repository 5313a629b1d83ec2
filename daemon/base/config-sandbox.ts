import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** Whether jobs run in a sandbox (docs/sandbox.md): where it cannot run, `preferred` runs them without one and says so, `required` runs none. */
export const SANDBOX_MODES = ['preferred', 'required', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** Paths an engine's sandbox shows besides the job's own (`engines.<name>.sandbox`): each must exist at start. */
export interface SandboxPaths {
  read_only: string[];
  read_write: string[];
}

/** `sandbox` in the config: a mode alone (`"preferred"`), or an object with the mode and what every job is given. */
export interface SandboxConfig {
  mode: SandboxMode;
  /** Shown read-only to every job of every engine. */
  read_only: string[];
  /** Names of the daemon's environment variables every engine gets besides the allow-list; `NAME_*` takes a prefix. */
  pass_env: string[];
  /** The user engines run as when the daemon runs as root (a name or a uid); null: `skilld-job` where it exists, else `nobody`. */
  run_as: string | null;
}

/** What one job may use (docs/sandbox.md, "Limits"); null: no limit. Sizes in bytes. */
export interface Limits {
  processes: number | null;
  memory: number | null;
  tmp: number;
  workspace: number | null;
}

export const LIMIT_NAMES = ['processes', 'memory', 'tmp', 'workspace'] as const;

/** Defaults a laptop and a server both accept. */
export const DEFAULT_LIMITS: Limits = { processes: 512, memory: 4 * 1024 ** 3, tmp: 512 * 1024 ** 2, workspace: 10 * 1024 ** 3 };

type Fail = (key: string, problem: string) => never;
type Raw = Record<string, unknown>;

/** An environment variable's name, or a prefix of names ending in `*`. */
const ENV_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

export function validateSandbox(raw: unknown, fail: Fail): SandboxConfig {
  if (typeof raw === 'string') return { mode: mode(raw, 'sandbox', fail), read_only: [], pass_env: [], run_as: null };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('sandbox', `must be one of ${SANDBOX_MODES.join(', ')}, or an object`);
  const given = raw as Raw;
  for (const key of Object.keys(given)) if (!['mode', 'read_only', 'pass_env', 'run_as'].includes(key)) fail(`sandbox.${key}`, 'is unknown');
  const passEnv = given['pass_env'] ?? [];
  if (!Array.isArray(passEnv) || !passEnv.every((name) => typeof name === 'string' && ENV_PATTERN.test(name))) fail('sandbox.pass_env', 'must be a list of variable names (a name ending in * takes every name it begins)');
  const runAs = given['run_as'] ?? null;
  if (runAs !== null && !(typeof runAs === 'string' && /^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/.test(runAs))) fail('sandbox.run_as', 'must be a user name or a uid');
  if (runAs === 'root' || runAs === '0') fail('sandbox.run_as', 'must be an unprivileged user: engines never run as root in a sandbox');
  return { mode: mode(given['mode'] ?? 'preferred', 'sandbox.mode', fail), read_only: existingPaths(given['read_only'] ?? [], 'sandbox.read_only', fail), pass_env: passEnv as string[], run_as: runAs as string | null };
}

function mode(raw: unknown, key: string, fail: Fail): SandboxMode {
  return SANDBOX_MODES.includes(raw as SandboxMode) ? (raw as SandboxMode) : fail(key, `must be one of ${SANDBOX_MODES.join(', ')}`);
}

/** `{read_only, read_write}`: lists of paths that exist now, resolved against the working directory. */
export function sandboxPaths(raw: unknown, key: string, fail: Fail): SandboxPaths {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(key, 'must be an object with read_only and read_write lists');
  const given = raw as Raw;
  for (const name of Object.keys(given)) if (name !== 'read_only' && name !== 'read_write') fail(`${key}.${name}`, 'is unknown');
  return { read_only: existingPaths(given['read_only'] ?? [], `${key}.read_only`, fail), read_write: existingPaths(given['read_write'] ?? [], `${key}.read_write`, fail) };
}

function existingPaths(raw: unknown, key: string, fail: Fail): string[] {
  if (!Array.isArray(raw) || !raw.every((p) => typeof p === 'string' && p !== '')) fail(key, 'must be a list of paths');
  const resolved = (raw as string[]).map((p) => resolve(p));
  const missing = resolved.find((p) => !existsSync(p));
  if (missing !== undefined) fail(key, `names ${missing}, which does not exist (a sandbox can only show what is there)`);
  return resolved;
}

/** `limits`: each a count or a size (`"4GiB"`, `"512MiB"`, or bytes), or null for none; `tmp` always has one. */
export function validateLimits(raw: unknown, key: string, fail: Fail, base: Limits = DEFAULT_LIMITS): Limits {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(key, 'must be an object');
  const given = raw as Raw;
  for (const name of Object.keys(given)) if (!(LIMIT_NAMES as readonly string[]).includes(name)) fail(`${key}.${name}`, `is unknown (${LIMIT_NAMES.join(', ')})`);
  const processes = given['processes'] === undefined ? base.processes : given['processes'];
  if (processes !== null && !(Number.isSafeInteger(processes) && (processes as number) >= 16)) fail(`${key}.processes`, 'must be null or an integer >= 16');
  const size = (name: 'memory' | 'tmp' | 'workspace', min: number): number | null => {
    const value = given[name];
    if (value === undefined) return base[name];
    if (value === null && name !== 'tmp') return null;
    const bytes = parseSize(value);
    return bytes !== null && bytes >= min ? bytes : fail(`${key}.${name}`, `must be a size of at least ${min / 1024 ** 2} MiB, such as "512MiB" or "4GiB"${name === 'tmp' ? '' : ', or null'}`);
  };
  return { processes: processes as number | null, memory: size('memory', 64 * 1024 ** 2), tmp: size('tmp', 1024 ** 2) ?? base.tmp, workspace: size('workspace', 1024 ** 2) };
}

const UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3, t: 1024 ** 4, tib: 1024 ** 4 };

/** A size: a whole number of bytes, or a number with a binary unit (`512MiB`, `4G`); null when it is none. */
export function parseSize(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : null;
  if (typeof value !== 'string') return null;
  const match = /^(\d+(?:\.\d+)?)\s*([A-Za-z]*)$/.exec(value.trim());
  const unit = UNITS[(match?.[2] ?? 'x').toLowerCase()];
  if (match === null || unit === undefined) return null;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/**
 * A skill's `limits` (runner.json): the same keys and values as the config's, which can only lower
 * the daemon's; a message saying what is wrong, or the limits given.
 */
export function parseSkillLimits(raw: unknown): Partial<Limits> | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'must be an object';
  const given = raw as Raw;
  const limits: Partial<Limits> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) return `${name} is unknown (${LIMIT_NAMES.join(', ')})`;
    const parsed = name === 'processes' ? (Number.isSafeInteger(value) && (value as number) >= 16 ? (value as number) : null) : parseSize(value);
    if (parsed === null) return `${name} must be ${name === 'processes' ? 'an integer >= 16' : 'a size, such as "512MiB" or "4GiB"'}`;
    limits[name as keyof Limits] = parsed;
  }
  return limits;
}

/** The limits of a job: the daemon's, lowered by its skill's. */
export function effectiveLimits(daemon: Limits, skill: Partial<Limits>): Limits {
  const lower = (ours: number | null, theirs: number | undefined): number | null => (theirs === undefined ? ours : ours === null ? theirs : Math.min(ours, theirs));
  return { processes: lower(daemon.processes, skill.processes ?? undefined), memory: lower(daemon.memory, skill.memory ?? undefined), tmp: Math.min(daemon.tmp, skill.tmp ?? daemon.tmp), workspace: lower(daemon.workspace, skill.workspace ?? undefined) };
}
