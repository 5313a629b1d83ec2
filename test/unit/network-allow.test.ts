// A job's network allow-list (allow-list.ts) and the resolved-address check (addresses.ts): what
// an entry may say, how a client's host is read, what matches, and where a connection is dialled.
import t from 'tap';
import { classifyAddress, decideDial, ownAddresses, systemLookup, type Decision, type Lookup } from '../../daemon/network/addresses.js';
import { AllowList, canonicalHost, isLoopbackEntry, parseAllowEntry, type AllowEntry } from '../../daemon/network/allow-list.js';

/** The entry a text makes; fails the test when it makes none. */
function entry(text: string): AllowEntry {
  const parsed = parseAllowEntry(text);
  if ('problem' in parsed) throw new Error(`${text}: ${parsed.problem}`);
  return parsed;
}

/** What is wrong with a text as an entry; null when it is one. */
function problem(text: unknown): string | null {
  const parsed = parseAllowEntry(text);
  return 'problem' in parsed ? parsed.problem : null;
}

const list = (...texts: string[]): AllowList => new AllowList(texts.map(entry));

t.test('entries: host:port, *.domain:port, IPv4 and bracketed IPv6, canonical', async (t) => {
  t.same(parseAllowEntry('api.example.com:443'), { text: 'api.example.com:443', host: 'api.example.com', port: 443, kind: 'name' });
  t.same(parseAllowEntry('*.Example.COM:8443'), { text: '*.Example.COM:8443', host: 'example.com', port: 8443, kind: 'wildcard' });
  t.same(parseAllowEntry('*.co.uk:443'), { text: '*.co.uk:443', host: 'co.uk', port: 443, kind: 'wildcard' }, 'two labels are enough');
  t.same(parseAllowEntry('10.0.0.5:5432'), { text: '10.0.0.5:5432', host: '10.0.0.5', port: 5432, kind: 'ip' });
  t.same(parseAllowEntry('127.1:80'), { text: '127.1:80', host: '127.0.0.1', port: 80, kind: 'ip' }, 'an address in a short form is canonical');
  t.same(parseAllowEntry('[::1]:8080'), { text: '[::1]:8080', host: '::1', port: 8080, kind: 'ip' });
  t.same(parseAllowEntry('[FD00:EC2:0:0:0:0:0:254]:80'), { text: '[FD00:EC2:0:0:0:0:0:254]:80', host: 'fd00:ec2::254', port: 80, kind: 'ip' });
  t.same(parseAllowEntry('localhost:3000'), { text: 'localhost:3000', host: 'localhost', port: 3000, kind: 'name' });
  t.same(parseAllowEntry('bücher.de:443'), { text: 'bücher.de:443', host: 'xn--bcher-kva.de', port: 443, kind: 'name' }, 'an IDN in punycode');
  t.same(parseAllowEntry('example.com.:443'), { text: 'example.com.:443', host: 'example.com', port: 443, kind: 'name' }, 'a trailing dot dropped');
  t.equal(entry('a:1').port, 1);
  t.equal(entry('a:65535').port, 65535);
});

t.test('entries: every problem in words, each saying the form expected', async (t) => {
  const form = /host:port or \*\.domain:port/;
  t.equal(problem('example.com'), 'needs a port: host:port or *.domain:port');
  t.equal(problem('example.com:'), 'needs a port: host:port or *.domain:port');
  t.equal(problem('[::1]'), 'needs a port: host:port or *.domain:port');
  t.equal(problem('example.com:*'), 'names every port (*): name one port, from 1 to 65535');
  for (const port of ['0', '65536', '99999', '-1', '80a', '1.5', '123456']) t.equal(problem(`example.com:${port}`), 'has a bad port: the port is a number from 1 to 65535', port);
  t.match(problem('*:443'), /^allows every host: /);
  t.match(problem('*'), /^allows every host: /);
  t.equal(problem('*.com:443'), 'is too broad: *. needs a domain of two labels or more, such as *.example.com');
  t.match(problem('*.localhost:80'), /^is too broad/);
  t.match(problem('*.*.example.com:443'), /^has a \* that is not a leading \*\./);
  t.match(problem('a*.example.com:443'), /^has a \* that is not a leading \*\./);
  t.match(problem('*example.com:443'), /^has a \* that is not a leading \*\./);
  t.match(problem('*.1.2.3.4:80'), /^puts a wildcard on an IP address/);
  t.not(problem('*.[::1]:80'), null);
  t.match(problem('https://example.com:443'), /^is a URL: .*no scheme/);
  t.match(problem('user@example.com:443'), /^has user info/);
  t.match(problem('example.com:443/path'), /^has a path/);
  t.match(problem('example.com/x'), /^has a path/);
  t.match(problem('example.com:443?q'), /^has a path/);
  t.match(problem(' example.com:443'), /^has spaces or control characters/);
  t.match(problem('example.com :443'), /^has spaces or control characters/);
  t.match(problem('exa\tmple.com:443'), /^has spaces or control characters/);
  t.match(problem('example.com\n:443'), /^has spaces or control characters/);
  t.match(problem('ex%61mple.com:443'), /^has a % escape/);
  t.match(problem('[fe80::1%eth0]:443'), /^has a % escape or an IPv6 zone/);
  t.equal(problem('::1:443'), 'has an IPv6 address without brackets: [::1]:port');
  t.match(problem('[::1:443'), /^has a bad IPv6 address/);
  t.match(problem('[::1]443'), /^has a bad IPv6 address/);
  t.match(problem('[nope]:443'), /^has an invalid host/);
  t.match(problem('1.2.3.256:80'), /^has an invalid host/);
  t.match(problem('foo.123:80'), /^has an invalid host/, 'a name ending in a number is no host');
  t.match(problem('a..b:80'), /^has an invalid host/);
  t.match(problem('a!b.com:80'), /^has an invalid host/);
  t.match(problem(':443'), /^has no host/);
  t.match(problem(''), /^is empty/);
  t.match(problem(443), /^must be a string/);
  t.match(problem(null), /^must be a string/);
  for (const text of ['', 'example.com', 'https://x:1', 'a b:1', 'u@x:1', 'x:1/p', '*', 'a*.b.c:1', 'bad..host:1', 42]) t.match(problem(text), form, `${String(text)}: says the form`);
});

t.test('canonicalHost: the WHATWG URL reading of a host, a little stricter', async (t) => {
  t.same(canonicalHost('127.1'), { host: '127.0.0.1', ip: 4 });
  t.same(canonicalHost('2130706433'), { host: '127.0.0.1', ip: 4 });
  t.same(canonicalHost('0x7f.0.0.1'), { host: '127.0.0.1', ip: 4 });
  t.same(canonicalHost('0x7f.1'), { host: '127.0.0.1', ip: 4 });
  t.same(canonicalHost('0177.0.0.1'), { host: '127.0.0.1', ip: 4 }, 'octal');
  t.same(canonicalHost('2852039166'), { host: '169.254.169.254', ip: 4 });
  t.same(canonicalHost('127.0.0.1.'), { host: '127.0.0.1', ip: 4 });
  t.same(canonicalHost('[::ffff:127.0.0.1]'), { host: '::ffff:7f00:1', ip: 6 });
  t.same(canonicalHost('::ffff:127.0.0.1'), { host: '::ffff:7f00:1', ip: 6 }, 'an IPv6 address without brackets, as a resolver gives it');
  t.same(canonicalHost('[0:0:0:0:0:0:0:1]'), { host: '::1', ip: 6 });
  t.same(canonicalHost('[FE80::A]'), { host: 'fe80::a', ip: 6 });
  t.same(canonicalHost('API.Example.COM'), { host: 'api.example.com', ip: 0 });
  t.same(canonicalHost('Bücher.de'), { host: 'xn--bcher-kva.de', ip: 0 });
  t.same(canonicalHost('a\u3002example.com'), { host: 'a.example.com', ip: 0 }, 'an ideographic full stop is a dot');
  t.same(canonicalHost('example.com.'), { host: 'example.com', ip: 0 });
  t.same(canonicalHost('localhost'), { host: 'localhost', ip: 0 });
  t.same(canonicalHost('my_host-1.internal'), { host: 'my_host-1.internal', ip: 0 });
  const invalid = ['', ' ', 'a b', 'exa\tmple.com', 'a\x00b', 'a\x7f', 'a/b', 'a\\b', 'u@h', 'h?q', 'h#f', 'ex%61mple.com', 'example.com:443', '[::1]:443', '[::1', '::1]', '[fe80::1%eth0]', '[nope]', '1.2.3.256', 'foo.123', 'a..b', '.', '..', 'example.com..', '*.example.com', 'a!b.com', 'xn--a.com', '\u00ad', 'a'.repeat(64) + '.com', `${'a.'.repeat(127)}com`];
  for (const host of invalid) t.equal(canonicalHost(host), null, JSON.stringify(host));
});

t.test('matching: names exactly, wildcards on strict subdomains, IPs only by ip entries, ports equal', async (t) => {
  const allow = list('api.example.com:443', '*.example.org:443', '10.0.0.5:5432', '[fd00::1]:80', 'localhost:3000');
  t.equal(allow.match('api.example.com', 443)?.text, 'api.example.com:443');
  t.equal(allow.match('API.EXAMPLE.COM.', 443)?.text, 'api.example.com:443', 'canonicalised first');
  t.equal(allow.match('api.example.com', 80), null, 'another port');
  t.equal(allow.match('x.api.example.com', 443), null, 'a name entry covers no subdomain');
  t.equal(allow.match('example.com', 443), null);
  t.equal(allow.match('a.example.org', 443)?.text, '*.example.org:443');
  t.equal(allow.match('a.b.example.org', 443)?.text, '*.example.org:443', 'any depth');
  t.equal(allow.match('example.org', 443), null, 'not the domain itself');
  t.equal(allow.match('badexample.org', 443), null, 'not a name that merely ends the same');
  t.equal(allow.match('a.example.org', 8443), null);
  t.equal(allow.match('10.0.0.5', 5432)?.text, '10.0.0.5:5432');
  t.equal(allow.match('167772165', 5432)?.text, '10.0.0.5:5432', 'an address in another spelling');
  t.equal(allow.match('[::ffff:10.0.0.5]', 5432)?.text, '10.0.0.5:5432', 'an IPv4-mapped address is the IPv4 one');
  t.equal(allow.match('10.0.0.5', 5433), null);
  t.equal(allow.match('[fd00:0::1]', 80)?.text, '[fd00::1]:80');
  t.equal(allow.match('fd00::1', 80)?.text, '[fd00::1]:80');
  t.equal(allow.match('localhost', 3000)?.text, 'localhost:3000');
  t.equal(allow.match('127.0.0.1', 3000), null, 'the name localhost lets no address through');
  t.equal(allow.match('a b', 443), null);
  t.equal(allow.match('', 443), null);
  const names = list('*.example.net:80', '1.example.net:80');
  t.equal(names.match('1.example.net', 80)?.text, '*.example.net:80', 'the first entry that matches');
  t.equal(names.match('93.184.216.34', 80), null, 'a wildcard never matches an IP');
  t.equal(names.match('[::1]', 80), null);
  t.equal(names.match('1.example.net', 80.5), null, 'no port but an equal one');
});

t.test('namesAddress: an ip entry with its port, in any spelling of the address', async (t) => {
  const allow = list('10.0.0.5:5432', '[fd00::1]:80', 'db.internal:5432');
  t.equal(allow.namesAddress('10.0.0.5', 5432), true);
  t.equal(allow.namesAddress('::ffff:10.0.0.5', 5432), true);
  t.equal(allow.namesAddress('fd00:0:0::1', 80), true);
  t.equal(allow.namesAddress('10.0.0.5', 80), false);
  t.equal(allow.namesAddress('10.0.0.6', 5432), false);
  t.equal(allow.namesAddress('db.internal', 5432), false, 'a name is no address');
  t.same(allow.entries.map((one) => one.text), ['10.0.0.5:5432', '[fd00::1]:80', 'db.internal:5432']);
});

t.test('isLoopbackEntry: 127/8, ::1 and localhost', async (t) => {
  for (const text of ['127.0.0.1:80', '127.9.8.7:80', '127.1:80', '[::1]:80', '[::ffff:127.0.0.1]:80', 'localhost:80', 'LOCALHOST.:80']) t.equal(isLoopbackEntry(entry(text)), true, text);
  for (const text of ['128.0.0.1:80', '10.0.0.1:80', '[::2]:80', 'localhost.example.com:80', '*.example.com:80', 'mylocalhost:80']) t.equal(isLoopbackEntry(entry(text)), false, text);
});

t.test('classifyAddress: every range, mapped and NAT64 forms, and the host\'s own addresses', async (t) => {
  const none = new Set<string>();
  const cases: [string, string][] = [
    ['0.0.0.0', 'unspecified'], ['0.255.1.2', 'unspecified'], ['::', 'unspecified'],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'], ['::1', 'loopback'],
    ['10.0.0.5', 'private'], ['10.255.255.255', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['100.64.0.1', 'private'], ['100.127.255.255', 'private'],
    ['fc00::1', 'private'], ['fd12:3456::1', 'private'], ['fd00:ec2::254', 'private'],
    ['169.254.169.254', 'link_local'], ['169.254.0.1', 'link_local'], ['fe80::1', 'link_local'], ['febf::1', 'link_local'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'], ['255.255.255.255', 'reserved'], ['192.0.0.8', 'reserved'], ['192.0.2.1', 'reserved'], ['198.18.0.1', 'reserved'], ['198.19.255.255', 'reserved'], ['198.51.100.7', 'reserved'], ['203.0.113.9', 'reserved'], ['2001:db8::1', 'reserved'],
    ['93.184.216.34', 'public'], ['8.8.8.8', 'public'], ['172.15.255.255', 'public'], ['172.32.0.0', 'public'], ['100.63.255.255', 'public'], ['100.128.0.0', 'public'], ['1.1.1.1', 'public'], ['223.255.255.255', 'public'], ['198.20.0.0', 'public'],
    ['2606:4700::1111', 'public'], ['2001:db9::1', 'public'], ['fec0::1', 'public'],
    // IPv4-mapped and NAT64: the IPv4 address carried.
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:169.254.169.254', 'link_local'], ['::ffff:10.1.2.3', 'private'], ['::ffff:0.0.0.0', 'unspecified'], ['::ffff:93.184.216.34', 'public'],
    ['64:ff9b::127.0.0.1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'link_local'], ['64:ff9b::192.168.0.1', 'private'], ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::7f00:1', 'public'], ['::ffff:0:7f00:1', 'public'],
    // Other spellings of one address.
    ['2130706433', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'], ['[::1]', 'loopback'],
    // Not an address at all.
    ['example.com', 'reserved'], ['', 'reserved'], ['a b', 'reserved'],
  ];
  for (const [address, kind] of cases) t.equal(classifyAddress(address, none), kind, address);
  const own = new Set(['192.0.2.2', 'fd00::2', '203.0.113.50', '127.0.0.1']);
  t.equal(classifyAddress('192.0.2.2', own), 'own', 'checked before the range');
  t.equal(classifyAddress('FD00:0::2', own), 'own', 'in any spelling');
  t.equal(classifyAddress('::ffff:203.0.113.50', own), 'own', 'a mapped form of an own address');
  t.equal(classifyAddress('64:ff9b::cb00:7132', own), 'own', 'a NAT64 form of an own address');
  t.equal(classifyAddress('127.0.0.1', own), 'own');
  t.equal(classifyAddress('192.0.2.3', own), 'reserved');
});

t.test('ownAddresses: the addresses of the host\'s interfaces, canonical', async (t) => {
  const own = ownAddresses();
  t.ok(own.has('127.0.0.1') || own.has('::1'), 'the loopback interface is among them');
  for (const address of own) t.equal(canonicalHost(address)?.host, address, address);
});

/** A lookup that answers from a table, and records what it was asked. */
function fakeLookup(table: Record<string, string[] | Error>): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<{ address: string; family: 4 | 6 }[]> => {
    asked.push(host);
    const answer = table[host];
    if (answer instanceof Error) throw answer;
    if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(lookup, { asked });
}

const dialled = (decision: Decision): unknown => ('refused' in decision ? decision : { address: decision.address, family: decision.family, entry: decision.entry.text });

t.test('decideDial: a name is dialled on a public address it resolves to', async (t) => {
  const allow = list('api.example.com:443', '*.example.org:443');
  const lookup = fakeLookup({ 'api.example.com': ['93.184.216.34', '2606:2800:220:1::1'], 'a.example.org': ['2606:2800:220:1:0:0:0:1'] });
  t.same(dialled(await decideDial('API.example.com', 443, allow, lookup, new Set())), { address: '93.184.216.34', family: 4, entry: 'api.example.com:443' });
  t.same(dialled(await decideDial('a.example.org', 443, allow, lookup, new Set())), { address: '2606:2800:220:1::1', family: 6, entry: '*.example.org:443' }, 'the address canonical');
  t.same(lookup.asked, ['api.example.com', 'a.example.org'], 'the canonical name is resolved');
});

t.test('decideDial: loopback, private, link-local, own and other addresses are refused, with a detail', async (t) => {
  const allow = list('evil.test:80', 'meta.test:80', 'self.test:80', 'many.test:80', 'odd.test:80', 'mapped.test:80');
  const lookup = fakeLookup({
    'evil.test': ['127.0.0.1', '::1'],
    'meta.test': ['169.254.169.254', 'fd00:ec2::254'],
    'self.test': ['198.51.100.20'],
    'many.test': ['10.0.0.5', '192.168.0.1', '172.16.0.1', '100.64.0.1', '0.0.0.0'],
    'odd.test': ['not-an-address'],
    'mapped.test': ['::ffff:127.0.0.1', '64:ff9b::a9fe:a9fe'],
  });
  const own = new Set(['198.51.100.20']);
  t.same(await decideDial('evil.test', 80, allow, lookup, own), { refused: 'address_refused', detail: 'evil.test resolves to 127.0.0.1 (loopback), ::1 (loopback)' });
  t.same(await decideDial('meta.test', 80, allow, lookup, own), { refused: 'address_refused', detail: 'meta.test resolves to 169.254.169.254 (link-local), fd00:ec2::254 (private)' });
  t.same(await decideDial('self.test', 80, allow, lookup, own), { refused: 'address_refused', detail: "self.test resolves to 198.51.100.20 (this host's own)" });
  t.same(await decideDial('many.test', 80, allow, lookup, own), { refused: 'address_refused', detail: 'many.test resolves to 10.0.0.5 (private), 192.168.0.1 (private), 172.16.0.1 (private) and 2 more' });
  t.same(await decideDial('odd.test', 80, allow, lookup, own), { refused: 'address_refused', detail: 'odd.test resolves to "not-an-address" (not an address)' });
  t.same(await decideDial('mapped.test', 80, allow, lookup, own), { refused: 'address_refused', detail: 'mapped.test resolves to ::ffff:7f00:1 (loopback), 64:ff9b::a9fe:a9fe (link-local)' });
});

t.test('decideDial: an ip entry lets the address it names through, with its port only', async (t) => {
  const lookup = fakeLookup({ 'db.internal': ['10.0.0.5'], 'meta.test': ['169.254.169.254'] });
  const allow = list('db.internal:5432', '10.0.0.5:5432', 'db.internal:6432', 'meta.test:80', '169.254.169.254:80');
  t.same(dialled(await decideDial('db.internal', 5432, allow, lookup, new Set())), { address: '10.0.0.5', family: 4, entry: 'db.internal:5432' });
  t.same(await decideDial('db.internal', 6432, allow, lookup, new Set()), { refused: 'address_refused', detail: 'db.internal resolves to 10.0.0.5 (private)' }, 'the ip entry is for another port');
  t.same(dialled(await decideDial('meta.test', 80, allow, lookup, new Set())), { address: '169.254.169.254', family: 4, entry: 'meta.test:80' }, 'the operator named the address');
  t.same(dialled(await decideDial('db.internal', 5432, allow, lookup, new Set(['10.0.0.5']))), { address: '10.0.0.5', family: 4, entry: 'db.internal:5432' }, 'even one of the host\'s own');
});

t.test('decideDial: an IP literal is dialled as it is, whatever its class, and only when an ip entry names it', async (t) => {
  const lookup = fakeLookup({});
  const allow = list('127.0.0.1:8080', '[::1]:8080', '169.254.169.254:80', '*.example.com:80', 'localhost:9000');
  t.same(dialled(await decideDial('127.1', 8080, allow, lookup, new Set(['127.0.0.1']))), { address: '127.0.0.1', family: 4, entry: '127.0.0.1:8080' });
  t.same(dialled(await decideDial('[::1]', 8080, allow, lookup, new Set())), { address: '::1', family: 6, entry: '[::1]:8080' });
  t.same(dialled(await decideDial('2852039166', 80, allow, lookup, new Set())), { address: '169.254.169.254', family: 4, entry: '169.254.169.254:80' });
  t.same(await decideDial('127.0.0.1', 9000, allow, lookup, new Set()), { refused: 'not_allowed', detail: '127.0.0.1:9000 is not on the allow-list' }, 'the name localhost is no address');
  t.same(await decideDial('[::ffff:7f00:1]', 9000, allow, lookup, new Set()), { refused: 'not_allowed', detail: '[::ffff:7f00:1]:9000 is not on the allow-list' });
  t.same(await decideDial('93.184.216.34', 80, allow, lookup, new Set()), { refused: 'not_allowed', detail: '93.184.216.34:80 is not on the allow-list' }, 'a wildcard matches no IP');
  t.same(lookup.asked, [], 'an IP literal is never resolved');
});

t.test('decideDial: the name localhost reaches the loopback only through a localhost entry', async (t) => {
  const own = new Set(['127.0.0.1', '::1']);
  const lookup = fakeLookup({ localhost: ['::1', '127.0.0.1'], 'lo.test': ['127.0.0.1'], 'x.localhost.test': ['127.0.0.1'] });
  t.same(dialled(await decideDial('localhost', 3000, list('localhost:3000'), lookup, own)), { address: '::1', family: 6, entry: 'localhost:3000' }, 'the first loopback address, though an own address');
  t.same(await decideDial('localhost', 3001, list('localhost:3000'), lookup, own), { refused: 'not_allowed', detail: 'localhost:3001 is not on the allow-list' });
  t.same(await decideDial('lo.test', 3000, list('lo.test:3000'), lookup, own), { refused: 'address_refused', detail: "lo.test resolves to 127.0.0.1 (this host's own)" }, 'another name resolving to the loopback');
  t.same(await decideDial('x.localhost.test', 3000, list('*.localhost.test:3000'), lookup, new Set()), { refused: 'address_refused', detail: 'x.localhost.test resolves to 127.0.0.1 (loopback)' });
  const strange = fakeLookup({ localhost: ['10.0.0.9', '127.0.0.2'] });
  t.same(dialled(await decideDial('localhost', 3000, list('localhost:3000'), strange, new Set())), { address: '127.0.0.2', family: 4, entry: 'localhost:3000' }, 'not any address localhost resolves to: its loopback ones');
});

t.test('decideDial: mixed answers dial the first survivor, in the resolver\'s order', async (t) => {
  const allow = list('mixed.test:443', '10.0.0.7:443');
  const lookup = fakeLookup({ 'mixed.test': ['127.0.0.1', '10.0.0.5', '2606:4700::1', '93.184.216.34'], 'named.test': ['169.254.1.1', '10.0.0.7', '8.8.8.8'] });
  t.same(dialled(await decideDial('mixed.test', 443, allow, lookup, new Set())), { address: '2606:4700::1', family: 6, entry: 'mixed.test:443' });
  const named = list('named.test:443', '10.0.0.7:443');
  t.same(dialled(await decideDial('named.test', 443, named, lookup, new Set())), { address: '10.0.0.7', family: 4, entry: 'named.test:443' }, 'a named address counts as a survivor in its place');
});

t.test('decideDial: a host not on the list, no host at all, or one that does not resolve', async (t) => {
  const allow = list('gone.test:443', 'empty.test:443', 'flaky.test:443', 'odd.test:443');
  const lookup = fakeLookup({ 'empty.test': [], 'flaky.test': Object.assign(new Error('queryA EAI_AGAIN flaky.test'), { code: 'EAI_AGAIN' }), 'odd.test': new Error('no code') });
  t.same(await decideDial('other.test', 443, allow, lookup, new Set()), { refused: 'not_allowed', detail: 'other.test:443 is not on the allow-list' });
  t.same(await decideDial('gone.test', 80, allow, lookup, new Set()), { refused: 'not_allowed', detail: 'gone.test:80 is not on the allow-list' });
  t.same(await decideDial('gone.test', 443, allow, lookup, new Set()), { refused: 'unresolved', detail: 'gone.test does not resolve (ENOTFOUND)' });
  t.same(await decideDial('empty.test', 443, allow, lookup, new Set()), { refused: 'unresolved', detail: 'empty.test does not resolve (no address)' });
  t.same(await decideDial('flaky.test', 443, allow, lookup, new Set()), { refused: 'unresolved', detail: 'flaky.test does not resolve (EAI_AGAIN)' });
  t.same(await decideDial('odd.test', 443, allow, lookup, new Set()), { refused: 'unresolved', detail: 'odd.test does not resolve (lookup failed)' });
  t.same(await decideDial('gone.test/x', 443, allow, lookup, new Set()), { refused: 'bad_host', detail: '"gone.test/x" is not a valid host' });
  t.same(await decideDial('a\x1b[2Jb', 443, allow, lookup, new Set()), { refused: 'bad_host', detail: '"a\\u001b[2Jb" is not a valid host' }, 'control characters escaped');
  t.same(await decideDial('', 443, allow, lookup, new Set()), { refused: 'bad_host', detail: '"" is not a valid host' });
  const long = await decideDial('x'.repeat(500), 443, allow, lookup, new Set());
  t.ok('refused' in long && long.refused === 'bad_host' && long.detail.length < 100, 'a long host is cut short in the detail');
});

t.test('systemLookup: the system resolver answers for localhost', async (t) => {
  const answers = await systemLookup('localhost');
  t.ok(answers.length > 0, 'at least one address');
  for (const answer of answers) t.equal(classifyAddress(answer.address, new Set()), 'loopback', answer.address);
  t.ok(answers.every((answer) => answer.family === (answer.address.includes(':') ? 6 : 4)), 'the family of each address');
});
