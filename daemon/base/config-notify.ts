import { parseDuration } from '../../rpc/duration.js';

/** The moments a webhook may be told of (docs/notify.md): a job entering one of these statuses. */
export const NOTIFY_EVENTS = ['waiting_user', 'failed', 'succeeded', 'canceled'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** One entry of `notify` in the config: where to POST which of a job's moves, signed with which secret. */
export interface NotifyHook {
  /** The receiver, `http://` or `https://`, as written (userinfo and query kept: they may be its credentials). */
  url: string;
  events: NotifyEvent[];
  /** The daemon's environment variable that holds the signing secret; the secret itself is never part of the config. */
  secret_env: string;
  /** Only jobs of these skills; null: every skill's. */
  skills: string[] | null;
  /** How long one delivery is retried after the event before it is given up. */
  retry_for_ms: number;
}

type Fail = (key: string, problem: string) => never;
type Raw = Record<string, unknown>;

/** An hour: long enough to ride out a receiver's restart or a deploy, short enough that a late "waiting" still means something. */
export const DEFAULT_RETRY_FOR = '1h';
/** A week: a receiver down longer is gone, and the outbox should not keep its deliveries forever. */
export const MAX_RETRY_FOR_MS = 7 * 24 * 60 * 60 * 1000;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HOOK_KEYS = ['url', 'events', 'secret_env', 'skills', 'retry_for'];

/** `notify`: a list of webhooks (docs/notify.md); an absent key is none. */
export function validateNotify(raw: unknown, fail: Fail): NotifyHook[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) fail('notify', 'must be a list of webhooks ({"url", "events", "secret_env"})');
  const hooks = (raw as unknown[]).map((entry, index) => validateHook(entry, `notify[${index}]`, fail));
  // A webhook is known by its URL across restarts (the outbox keeps a digest of it): two entries of one URL could not be told apart.
  hooks.forEach((hook, index) => {
    const first = hooks.findIndex((other) => other.url === hook.url);
    if (first !== index) fail(`notify[${index}].url`, `is notify[${first}]'s too: list each webhook once, with all its events`);
  });
  return hooks;
}

function validateHook(raw: unknown, key: string, fail: Fail): NotifyHook {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(key, 'must be an object with url, events and secret_env');
  const given = raw as Raw;
  for (const name of Object.keys(given)) if (!HOOK_KEYS.includes(name)) fail(`${key}.${name}`, 'is unknown');
  const events = given['events'];
  if (!Array.isArray(events) || events.length === 0) fail(`${key}.events`, `must be a non-empty list of ${NOTIFY_EVENTS.join(', ')}`);
  for (const event of events as unknown[]) if (!NOTIFY_EVENTS.includes(event as NotifyEvent)) fail(`${key}.events`, `has ${JSON.stringify(event)}, which is not one of ${NOTIFY_EVENTS.join(', ')}`);
  const variable = given['secret_env'];
  if (typeof variable !== 'string' || !VARIABLE_NAME.test(variable)) fail(`${key}.secret_env`, 'must name an environment variable of the daemon (letters, digits and _) that holds the signing secret');
  const skills = given['skills'] ?? null;
  if (skills !== null && (!Array.isArray(skills) || skills.length === 0 || !skills.every((id) => typeof id === 'string' && id !== ''))) fail(`${key}.skills`, 'must be a non-empty list of skill ids');
  const retryFor = given['retry_for'] ?? DEFAULT_RETRY_FOR;
  const ms = typeof retryFor === 'string' ? parseDuration(retryFor) : null;
  if (ms === null || ms > MAX_RETRY_FOR_MS) fail(`${key}.retry_for`, 'must be a duration with a unit, such as "1h", "30m" or "2d", at most 7d');
  return { url: hookUrl(given['url'], `${key}.url`, fail), events: [...new Set(events as NotifyEvent[])], secret_env: variable as string, skills: skills as string[] | null, retry_for_ms: ms as number };
}

function hookUrl(raw: unknown, key: string, fail: Fail): string {
  const problem = 'must be an http:// or https:// URL with a host';
  if (typeof raw !== 'string') return fail(key, problem);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(key, problem);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.hostname === '') fail(key, problem);
  return raw;
}

/**
 * Each webhook's secret is read from the daemon's environment at start: one not set there stops
 * the start, as a gateway's key does, rather than every delivery failing later. Returns what is
 * wrong, or null.
 */
export function unsetNotifySecret(hooks: readonly NotifyHook[], env: NodeJS.ProcessEnv): string | null {
  const index = hooks.findIndex((hook) => (env[hook.secret_env] ?? '') === '');
  const hook = hooks[index];
  return hook === undefined ? null : `config key "notify[${index}].secret_env" names ${hook.secret_env}, which is not set in the daemon's environment`;
}
