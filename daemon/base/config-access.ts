import { SHARE_ENTRY } from '../model/access.js';

/** Who may see and act on which jobs (docs/access.md). */
export const ACCESS_MODES = ['owner', 'shared'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

/**
 * `access`: `owner` (the default): a user sees and acts on their own jobs, those shared with them,
 * and every job if an administrator; `shared`: everyone who may connect sees and acts on every
 * job (a single-user machine). `admins` adds administrators to root and the daemon's own user.
 */
export interface AccessConfig {
  mode: AccessMode;
  /** `user:<name>` and `group:<name>` entries. */
  admins: string[];
}

export const DEFAULT_ACCESS: AccessConfig = { mode: 'owner', admins: [] };

type Fail = (key: string, problem: string) => never;

export function validateAccess(raw: unknown, fail: Fail): AccessConfig {
  if (raw === undefined) return DEFAULT_ACCESS;
  if (typeof raw === 'string') return { ...DEFAULT_ACCESS, mode: accessMode(raw, 'access', fail) };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('access', `must be one of ${ACCESS_MODES.join(', ')}, or an object`);
  const given = raw as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!['mode', 'admins'].includes(key)) fail(`access.${key}`, 'is unknown');
  const admins = given['admins'] ?? [];
  if (!Array.isArray(admins)) fail('access.admins', 'must be a list of "user:<name>" and "group:<name>" entries');
  for (const entry of admins as unknown[]) if (typeof entry !== 'string' || !SHARE_ENTRY.test(entry)) fail('access.admins', `has ${JSON.stringify(entry)}, which is not "user:<name>" or "group:<name>"`);
  return { mode: given['mode'] === undefined ? 'owner' : accessMode(given['mode'], 'access.mode', fail), admins: [...new Set(admins as string[])] };
}

function accessMode(raw: unknown, key: string, fail: Fail): AccessMode {
  return ACCESS_MODES.includes(raw as AccessMode) ? (raw as AccessMode) : fail(key, `must be one of ${ACCESS_MODES.join(', ')}`);
}
