import { isIPv6 } from 'node:net';

/** Where a proxied request asks to go: a host name or IP address (IPv6 without its brackets), a port, and the two as the request wrote them. */
export interface ProxyTarget {
  host: string;
  port: number;
  /** `host:port` or `[::1]:443`, as written (the port may be absent where it has a default). */
  authority: string;
}

/** A request's target after parsing: the target, or what is wrong with it in words. */
export type Parsed<T> = T | { problem: string };

// Letters, digits, dots, hyphens and underscores: a DNS name or an IPv4 address, nothing that
// another parser could split differently (no `@`, no backslash, no percent-encoding).
const HOST_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$/;
const AUTHORITY = /^(?:\[([^\]]*)\]|([^:[\]]*))(?::(\d{1,5}))?$/;
const ABSOLUTE_URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)(?:#.*)?$/;

/**
 * The target of `text`, an authority (`host:port`, `[v6]:port`); `defaultPort` when it names no
 * port, and a problem when there is none to take. A raw IPv6 address needs its brackets.
 */
export function parseAuthority(text: string, defaultPort: number | null): Parsed<ProxyTarget> {
  const match = AUTHORITY.exec(text);
  if (match === null) return { problem: `${JSON.stringify(text)} is not host:port` };
  const [, v6, name, digits] = match;
  const host = v6 ?? name ?? '';
  if (v6 !== undefined ? !isIPv6(v6) : !HOST_NAME.test(host)) return { problem: `${JSON.stringify(text)} names no valid host` };
  const port = digits === undefined ? defaultPort : Number(digits);
  if (port === null) return { problem: `${JSON.stringify(text)} names no port` };
  if (port < 1 || port > 65535) return { problem: `${JSON.stringify(text)} names a port out of range` };
  return { host, port, authority: text };
}

/**
 * The target and the path of an absolute URI (`http://host:port/path?query`, port 80 by default);
 * only the `http` scheme is forwarded (https goes through CONNECT). A missing path is `/`; a
 * fragment is dropped.
 */
export function parseAbsoluteUri(url: string): Parsed<{ target: ProxyTarget; path: string }> {
  const match = ABSOLUTE_URI.exec(url);
  if (match === null) return { problem: 'the request target is not an absolute URI' };
  const [, scheme = '', authority = '', rest = ''] = match;
  if (scheme.toLowerCase() !== 'http') return { problem: `only http:// URIs are forwarded, not ${scheme}:// (open a tunnel with CONNECT)` };
  const target = parseAuthority(authority, 80);
  if ('problem' in target) return target;
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  return { target, path };
}
