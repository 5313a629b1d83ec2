import { isIP } from 'node:net';

/**
 * One place a job's engine may connect to, from the config or a skill's runner.json: a host name,
 * every strict subdomain of a domain (`*.example.com`), or an IP address, always with one port.
 */
export interface AllowEntry {
  /** As written in the config or runner.json, for messages. */
  text: string;
  /** A lowercase host name (punycode), the domain after `*.` for a wildcard, or a canonical IP literal (IPv6 without brackets). */
  host: string;
  port: number;
  kind: 'name' | 'wildcard' | 'ip';
}

const FORM = 'host:port or *.domain:port';

/**
 * Parses `host:port`, `*.domain:port`, `1.2.3.4:port`, `[::1]:port`; a problem in words otherwise.
 * A port is always named; a wildcard must cover a domain of two labels or more; a URL (scheme,
 * user info, path) is refused rather than guessed at.
 */
export function parseAllowEntry(text: unknown): AllowEntry | { problem: string } {
  if (typeof text !== 'string') return { problem: `must be a string: ${FORM}` };
  const formProblem = problemOfForm(text);
  if (formProblem !== null) return { problem: formProblem };
  const split = splitPort(text);
  if ('problem' in split) return split;
  const host = parseHost(split.host);
  if ('problem' in host) return host;
  if (split.port === null || split.port === '') return { problem: `needs a port: ${FORM}` };
  if (split.port === '*') return { problem: 'names every port (*): name one port, from 1 to 65535' };
  const port = /^\d{1,5}$/.test(split.port) ? Number(split.port) : 0;
  if (port < 1 || port > 65535) return { problem: 'has a bad port: the port is a number from 1 to 65535' };
  return { text, host: host.host, port, kind: host.kind };
}

/** What a text that is not an entry at all looks like, in words; null when its characters may make one. */
function problemOfForm(text: string): string | null {
  if (text === '') return `is empty: ${FORM}`;
  if (/[\s\x00-\x1f\x7f]/.test(text)) return `has spaces or control characters: ${FORM}`;
  if (text.includes('://')) return `is a URL: the form is ${FORM}, with no scheme`;
  if (text.includes('@')) return `has user info: the form is ${FORM}`;
  if (/[/\\?#]/.test(text)) return `has a path: the form is ${FORM}`;
  if (text.includes('%')) return `has a % escape or an IPv6 zone: ${FORM}`;
  return null;
}

/** The host and port of `host:port` or `[v6]:port`; port null when none is written. */
function splitPort(text: string): { host: string; port: string | null } | { problem: string } {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const rest = close < 0 ? '' : text.slice(close + 1);
    if (close < 0 || (rest !== '' && !rest.startsWith(':'))) return { problem: `has a bad IPv6 address: [::1]:port, or ${FORM}` };
    return { host: text.slice(0, close + 1), port: rest === '' ? null : rest.slice(1) };
  }
  const colon = text.lastIndexOf(':');
  if (colon < 0) return { host: text, port: null };
  const host = text.slice(0, colon);
  if (host.includes(':')) return { problem: 'has an IPv6 address without brackets: [::1]:port' };
  return { host, port: text.slice(colon + 1) };
}

/** The host of an entry, canonical, with its kind; a wildcard over one label or over an address is refused. */
function parseHost(host: string): Pick<AllowEntry, 'host' | 'kind'> | { problem: string } {
  if (host === '*' || host === '') return { problem: host === '*' ? `allows every host: ${FORM}` : `has no host: ${FORM}` };
  if (host.startsWith('*.')) {
    const domain = host.slice(2);
    if (domain.includes('*')) return { problem: `has a * that is not a leading *.: ${FORM}` };
    const canonical = canonicalHost(domain);
    if (canonical === null) return { problem: `has an invalid domain after *.: ${FORM}` };
    if (canonical.ip !== 0) return { problem: 'puts a wildcard on an IP address: name the address alone' };
    if (!canonical.host.includes('.')) return { problem: 'is too broad: *. needs a domain of two labels or more, such as *.example.com' };
    return { host: canonical.host, kind: 'wildcard' };
  }
  if (host.includes('*')) return { problem: `has a * that is not a leading *.: ${FORM}` };
  const canonical = canonicalHost(host);
  if (canonical === null) return { problem: `has an invalid host: ${FORM}` };
  return { host: canonical.host, kind: canonical.ip === 0 ? 'name' : 'ip' };
}

/** Characters refused before URL parsing: what would end or change a host there, and what no client should send in one. */
const REFUSED_IN_HOST = /[\s\x00-\x1f\x7f/\\@?#%:[\]]/;
const LABEL = /^[a-z0-9_-]{1,63}$/;

/**
 * A host as a client wrote it, canonical (WHATWG URL host parsing: lowercase, punycode,
 * `127.1`/`2130706433`/`0x7f.1` → `127.0.0.1`, IPv6 compressed, brackets removed), with whether it
 * is an IP literal; null when it is not a valid host (empty, spaces, control characters, `/`, `@`, …).
 * An IPv6 address may come with brackets or without. Stricter than a URL in three ways, so that
 * what is matched is what the resolver is asked: a `%` escape is refused, one trailing dot of a
 * name is dropped, and a name is only letters, digits, `-` and `_` in labels of 1 to 63.
 */
export function canonicalHost(host: string): { host: string; ip: 0 | 4 | 6 } | null {
  if (typeof host !== 'string' || host === '' || host.length > 300) return null;
  const bracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : isIP(host) === 6 ? host : null;
  if (bracketed !== null) {
    if (!/^[0-9A-Fa-f:.]+$/.test(bracketed)) return null;
    const parsed = urlHost(`[${bracketed}]`);
    return parsed === null ? null : { host: parsed.slice(1, -1), ip: 6 };
  }
  if (REFUSED_IN_HOST.test(host)) return null;
  const parsed = urlHost(host);
  if (parsed === null) return null;
  if (isIP(parsed) === 4) return { host: parsed, ip: 4 };
  const name = parsed.endsWith('.') ? parsed.slice(0, -1) : parsed;
  if (name.length > 253 || !name.split('.').every((label) => LABEL.test(label))) return null;
  return { host: name, ip: 0 };
}

/** The host of `http://<host>/` as a URL parses it; null when it does not parse. */
function urlHost(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
}

const MAPPED_V4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The address a canonical IP literal reaches: an IPv4-mapped IPv6 address (`::ffff:7f00:1`) is the
 * IPv4 address it carries, so that an entry and a client may name one host in either form.
 */
export function addressKey(canonical: string): string {
  const mapped = MAPPED_V4.exec(canonical);
  if (mapped === null) return canonical;
  const high = parseInt(mapped[1] ?? '0', 16);
  const low = parseInt(mapped[2] ?? '0', 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Whether an entry names the host's loopback: 127.0.0.0/8, ::1, or the name `localhost`. */
export function isLoopbackEntry(entry: AllowEntry): boolean {
  if (entry.kind === 'name') return entry.host === 'localhost';
  if (entry.kind !== 'ip') return false;
  const address = addressKey(entry.host);
  return address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));
}
