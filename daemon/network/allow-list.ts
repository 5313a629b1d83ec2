import { addressKey, canonicalHost, type AllowEntry } from '../base/allow-entry.js';

export { canonicalHost, isLoopbackEntry, parseAllowEntry, type AllowEntry } from '../base/allow-entry.js';

/**
 * A job's allow-list: the entries its engine's connections are checked against, first match wins.
 * Names and wildcards only ever match names, and IP addresses only `ip` entries, so that no
 * spelling of an address slips past a list of names.
 */
export class AllowList {
  readonly entries: readonly AllowEntry[];

  constructor(entries: readonly AllowEntry[]) {
    this.entries = Object.freeze([...entries]);
  }

  /**
   * The entry that lets a client ask for host:port (the host canonicalised first), or null. A name
   * matches a `name` entry exactly, or a `wildcard` entry when it is a strict subdomain
   * (`*.example.com` matches `a.example.com` and `a.b.example.com`, not `example.com`); an IP
   * literal matches only an `ip` entry naming that address (wildcards and names never match an IP).
   * The port must be equal.
   */
  match(host: string, port: number): AllowEntry | null {
    const canonical = canonicalHost(host);
    if (canonical === null) return null;
    if (canonical.ip !== 0) return this.ipEntry(canonical.host, port);
    const name = canonical.host;
    return this.entries.find((entry) => entry.port === port && ((entry.kind === 'name' && entry.host === name) || (entry.kind === 'wildcard' && name.endsWith(`.${entry.host}`)))) ?? null;
  }

  /** Whether an `ip` entry names this address (canonical) with this port: the resolved-address check lets such an address through whatever its class. */
  namesAddress(address: string, port: number): boolean {
    const canonical = canonicalHost(address);
    return canonical !== null && canonical.ip !== 0 && this.ipEntry(canonical.host, port) !== null;
  }

  private ipEntry(address: string, port: number): AllowEntry | null {
    const key = addressKey(address);
    return this.entries.find((entry) => entry.kind === 'ip' && entry.port === port && addressKey(entry.host) === key) ?? null;
  }
}
