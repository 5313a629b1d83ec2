import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList } from 'node:net';
import { networkInterfaces } from 'node:os';
import { canonicalHost, type AllowEntry, type AllowList } from './allow-list.js';

/** What an IP address reaches, as far as the resolved-address check cares. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'unspecified' | 'multicast' | 'reserved' | 'own';

type RangeClass = Exclude<AddressClass, 'public' | 'own'>;

/** The ranges of each class but `public` and `own`, as `address/prefix`. */
const RANGES: Readonly<Record<RangeClass, readonly string[]>> = {
  unspecified: ['0.0.0.0/8', '::/128'],
  loopback: ['127.0.0.0/8', '::1/128'],
  // 100.64/10 is carrier-grade NAT; fc00::/7 holds AWS's metadata service at fd00:ec2::254.
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'],
  // 169.254.169.254, the cloud metadata service, is here.
  link_local: ['169.254.0.0/16', 'fe80::/10'],
  multicast: ['224.0.0.0/4', 'ff00::/8'],
  reserved: ['240.0.0.0/4', '192.0.0.0/24', '192.0.2.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'],
};

/** One block list per class, built once. */
const LISTS: readonly (readonly [RangeClass, BlockList])[] = Object.entries(RANGES).map(([name, ranges]) => {
  const list = new BlockList();
  for (const range of ranges) {
    const [network = '', prefix = ''] = range.split('/');
    list.addSubnet(network, Number(prefix), network.includes(':') ? 'ipv6' : 'ipv4');
  }
  return [name as RangeClass, list] as const;
});

/**
 * The class of an IP address: `own` when it is one of the host's own interface addresses (checked
 * first), else by range. IPv4-mapped IPv6 (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) are classed as
 * the IPv4 address they carry. What is not an IP address at all is `reserved`, so that it is refused.
 */
export function classifyAddress(address: string, own: ReadonlySet<string>): AddressClass {
  const canonical = canonicalHost(address);
  if (canonical === null || canonical.ip === 0) return 'reserved';
  const carried = canonical.ip === 6 ? carriedV4(canonical.host) : null;
  if (own.has(canonical.host) || (carried !== null && own.has(carried))) return 'own';
  return rangeClass(canonical.host, canonical.ip);
}

/** The class of a canonical IP address by its range alone, an IPv6 address carrying an IPv4 one by that. */
function rangeClass(address: string, family: 4 | 6): Exclude<AddressClass, 'own'> {
  const carried = family === 6 ? carriedV4(address) : null;
  const type = family === 4 || carried !== null ? 'ipv4' : 'ipv6';
  return LISTS.find(([, list]) => list.check(carried ?? address, type))?.[0] ?? 'public';
}

/** The IPv4 address a canonical IPv6 address carries: IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96); null otherwise. */
function carriedV4(address: string): string | null {
  const [head = '', tail] = address.split('::');
  const pieces = (part: string): number[] => (part === '' ? [] : part.split(':').map((piece) => parseInt(piece, 16)));
  const front = pieces(head);
  const back = tail === undefined ? [] : pieces(tail);
  const words = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  const zero = (from: number, to: number): boolean => words.slice(from, to).every((word) => word === 0);
  const mapped = zero(0, 5) && words[5] === 0xffff;
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6);
  if (!mapped && !nat64) return null;
  const high = words[6] ?? 0;
  const low = words[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Every address of the host's interfaces (os.networkInterfaces), canonical. */
export function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const info of Object.values(networkInterfaces()).flatMap((list) => list ?? [])) {
    const canonical = canonicalHost(info.address);
    if (canonical !== null && canonical.ip !== 0) own.add(canonical.host);
  }
  return own;
}

/** Resolves a host name to its addresses, in the resolver's order. */
export type Lookup = (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;

/** The system's resolver: dns.promises.lookup(host, { all: true, verbatim: true }). */
export const systemLookup: Lookup = async (host) => {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** Why a connection is refused: the host is not on the list, is no host, does not resolve, or resolves only to refused addresses. */
export type RefusalReason = 'not_allowed' | 'bad_host' | 'unresolved' | 'address_refused';

/** Where to dial and by which entry, or why not (`detail` is a short sentence for people). */
export type Decision = { address: string; family: 4 | 6; entry: AllowEntry } | { refused: RefusalReason; detail: string };

const CLASS_WORDS: Readonly<Record<AddressClass, string>> = {
  public: 'public',
  loopback: 'loopback',
  private: 'private',
  link_local: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  reserved: 'reserved',
  own: "this host's own",
};

/** How many refused addresses a detail names before it counts the rest. */
const DETAIL_ADDRESSES = 3;

/**
 * Where a connection asked for host:port may be dialled, checked on the address actually dialled.
 * An IP literal the list names is dialled as it is, whatever its class: the operator named it. A
 * name is resolved once, and the first address that is public, or that an `ip` entry names with
 * this port, is dialled; the loopback addresses too when the entry is the name `localhost`.
 */
export async function decideDial(host: string, port: number, allow: AllowList, lookup: Lookup, own: ReadonlySet<string>): Promise<Decision> {
  const canonical = canonicalHost(host);
  if (canonical === null) return { refused: 'bad_host', detail: `${quoted(host)} is not a valid host` };
  const entry = allow.match(canonical.host, port);
  if (entry === null) return { refused: 'not_allowed', detail: `${canonical.ip === 6 ? `[${canonical.host}]` : canonical.host}:${port} is not on the allow-list` };
  if (canonical.ip !== 0) return { address: canonical.host, family: canonical.ip, entry };
  let answers: { address: string }[];
  try {
    answers = await lookup(canonical.host);
  } catch (error) {
    return { refused: 'unresolved', detail: `${canonical.host} does not resolve (${resolverCode(error)})` };
  }
  if (answers.length === 0) return { refused: 'unresolved', detail: `${canonical.host} does not resolve (no address)` };
  const localhost = entry.kind === 'name' && entry.host === 'localhost';
  const refused: string[] = [];
  for (const answer of answers) {
    const address = canonicalHost(answer.address);
    if (address === null || address.ip === 0) {
      refused.push(`${quoted(answer.address)} (not an address)`);
      continue;
    }
    const kind = classifyAddress(address.host, own);
    const loopback = localhost && rangeClass(address.host, address.ip) === 'loopback';
    if (kind === 'public' || loopback || allow.namesAddress(address.host, port)) return { address: address.host, family: address.ip, entry };
    refused.push(`${address.host} (${CLASS_WORDS[kind]})`);
  }
  const more = refused.length > DETAIL_ADDRESSES ? ` and ${refused.length - DETAIL_ADDRESSES} more` : '';
  return { refused: 'address_refused', detail: `${canonical.host} resolves to ${refused.slice(0, DETAIL_ADDRESSES).join(', ')}${more}` };
}

/** The resolver's error code (`ENOTFOUND`, `EAI_AGAIN`, …), or a word when it gives none. */
function resolverCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? code : 'lookup failed';
}

/** A text from a client, short and with its control characters escaped, for a detail. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}
