import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newToken } from './token-file.js';

/**
 * Who may use the page (docs/web.md, Security): a request must name one of the page's own hosts
 * (a page of another site that a DNS name was rebound to 127.0.0.1 names its own), carry the
 * session cookie (set once the printed URL's token was shown), and, when it changes anything,
 * come from the page itself (its `Origin`, and a JSON body, which no form of another site can send).
 */
export class Guard {
  readonly token: string;
  readonly cookieName: string;
  readonly #hosts: Set<string>;
  readonly #origins: Set<string>;

  /** `hosts`: the `host:port` names the page answers to; `token`: a given one (else a random one). */
  constructor(hosts: readonly string[], port: number, token?: string) {
    this.token = token ?? newToken();
    // Cookies are not kept apart by port: two pages on one machine each have their own name.
    this.cookieName = `skilld_web_${port}`;
    this.#hosts = new Set(hosts.map((host) => host.toLowerCase()));
    this.#origins = new Set(hosts.map((host) => `http://${host.toLowerCase()}`));
  }

  /** Whether the request names one of the page's hosts. */
  hostAllowed(req: IncomingMessage): boolean {
    const host = req.headers.host;
    return host !== undefined && this.#hosts.has(host.toLowerCase());
  }

  /** Whether `given` is the token (compared in constant time). */
  tokenMatches(given: string | null): boolean {
    if (given === null) return false;
    const a = digest(given);
    return timingSafeEqual(a, digest(this.token));
  }

  /** Whether the request carries the session cookie. */
  signedIn(req: IncomingMessage): boolean {
    return this.tokenMatches(cookieValue(req.headers.cookie, this.cookieName));
  }

  /**
   * Whether a request that changes something comes from the page: its `Origin` is the page's own
   * (browsers send one with every POST, and a page cannot forge it) and its body is JSON.
   */
  sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    return origin !== undefined && this.#origins.has(origin.toLowerCase()) && type === 'application/json';
  }

  /**
   * The cookie that holds the session: for this origin only, never sent by another site's request,
   * never read by a script. Its value is the token itself, so a page started again with its kept
   * token (`--port N`) finds a signed-in browser still signed in, and a new token signs every
   * browser out.
   */
  sessionCookie(): string {
    return `${this.cookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** One cookie's value in a `Cookie` header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/**
 * The headers every answer carries: nothing but the page's own files may run or load (`script`:
 * also the import map, by its hash), no other site may frame it, no type is guessed, no address
 * leaks as a referrer, nothing is cached.
 */
export function securityHeaders(res: ServerResponse, scriptHashes: readonly string[]): void {
  const scripts = ["'self'", ...scriptHashes.map((hash) => `'sha256-${hash}'`)].join(' ');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; script-src ${scripts}; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}
