import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * A job's gateway token (docs/network.md, "The model gateway"): what its engine is given in place
 * of the provider's key. The daemon keeps only its hash (in the job's network record too, so a
 * daemon that restarts still knows it); the key itself never leaves the daemon's memory.
 */
export function newGatewayToken(): string {
  return `skilld-${randomBytes(24).toString('base64url')}`;
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The headers an engine sends its key in: Anthropic's, Google's, and a bearer token (OpenAI's, and most others). */
const KEY_HEADERS = new Set(['x-api-key', 'x-goog-api-key', 'authorization']);
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * A request's headers and path with the job's token swapped for the provider's key wherever the
 * engine put it: a key header, `Authorization: Bearer`, or a `key=` query parameter (Gemini's
 * older form). Null when no place holds the job's token: the request is not the job's engine's.
 * Every key header and `key` parameter must hold the token: a request that also brings a key of
 * its own is refused, so that nothing but the daemon's key reaches the provider in its name.
 */
export function swapToken(rawHeaders: readonly string[], path: string, hash: string, key: string): { headers: string[]; path: string } | null {
  let found = false;
  const headers: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    const value = rawHeaders[i + 1] ?? '';
    const lower = name.toLowerCase();
    if (!KEY_HEADERS.has(lower)) {
      headers.push(name, value);
      continue;
    }
    const bearer = lower === 'authorization' ? BEARER.exec(value) : null;
    const given = lower === 'authorization' ? bearer?.[1] : value.trim();
    if (given === undefined || !sameToken(given, hash)) return null;
    found = true;
    headers.push(name, lower === 'authorization' ? `Bearer ${key}` : key);
  }
  const query = path.indexOf('?');
  if (query < 0) return found ? { headers, path } : null;
  const params = new URLSearchParams(path.slice(query + 1));
  const keys = params.getAll('key');
  if (keys.length === 0) return found ? { headers, path } : null;
  if (!keys.every((given) => sameToken(given, hash))) return null;
  params.set('key', key);
  return { headers, path: `${path.slice(0, query)}?${params.toString()}` };
}

/**
 * The token last found to match each hash: an engine sends the same token with every call, and
 * comparing it again costs less than hashing it again. Bounded, the jobs least recently called for
 * leaving it first (the cache jobs/get's requests are kept in).
 */
const matched = new LRUCache<string, Buffer>({ max: 256 });

function sameToken(given: string, hash: string): boolean {
  const known = matched.get(hash);
  const bytes = Buffer.from(given, 'utf8');
  if (known !== undefined && known.length === bytes.length && timingSafeEqual(known, bytes)) return true;
  const a = Buffer.from(tokenHash(given), 'hex');
  const b = Buffer.from(hash, 'hex');
  if (a.length !== b.length || !timingSafeEqual(a, b)) return false;
  matched.set(hash, bytes);
  return true;
}
