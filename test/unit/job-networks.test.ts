// Each running job's own way out (network/job-networks.ts): its folder of sockets, the proxy's
// port, forwarded loopback ports, what a restarted daemon opens again, and what a start sweeps.
import t from 'tap';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllowEntry, type AllowEntry } from '../../daemon/base/allow-entry.js';
import { JobNetworks, PROXY_PORT, proxyEnv } from '../../daemon/network/job-networks.js';
import type { Refusal } from '../../daemon/network/refusals.js';
import { FakeClock } from '../helpers/fake-clock.js';

const root = await mkdtemp(join(tmpdir(), 'skilld-nets-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

const entries = (...texts: string[]): AllowEntry[] => texts.map((text) => parseAllowEntry(text) as AllowEntry);

function networks(dir: string, refused: Array<[string, Refusal]> = []): JobNetworks {
  return new JobNetworks({ dir, clock: new FakeClock(), refused: (jobId, refusal) => refused.push([jobId, refusal]), lookup: async () => [{ address: '10.0.0.5', family: 4 }] });
}

/** What a socket answers to `text`, until it closes. */
async function ask(path: string, text: string): Promise<string> {
  const socket = connect(path);
  socket.write(text);
  let got = '';
  socket.on('data', (data: Buffer) => (got += data.toString()));
  await once(socket, 'close');
  return got;
}

t.test("a job's network: its folder, the proxy's port and variables, a socket per forwarded port", async (t) => {
  const dir = join(root, 'open');
  const refused: Array<[string, Refusal]> = [];
  const nets = networks(dir, refused);
  t.teardown(() => nets.closeAll());
  const host = createServer((socket) => socket.end('from the host\n')).listen(0, '127.0.0.1');
  await once(host, 'listening');
  t.teardown(() => host.close());
  const port = (host.address() as AddressInfo).port;
  const opened = nets.open('job-a', entries('api.example.com:443', `127.0.0.1:${port}`, 'localhost:3128'));
  t.same(opened.listeners, [
    { host: '127.0.0.1', port: PROXY_PORT + 1, socket: 'proxy.sock' },
    { host: '127.0.0.1', port, socket: `forward-${port}.sock` },
    { host: '127.0.0.1', port: 3128, socket: 'forward-3128.sock' },
  ], 'a forwarded 3128 moves the proxy to the next port');
  t.same(opened.env, proxyEnv(PROXY_PORT + 1));
  t.equal(opened.folder, join(dir, 'job-a'));
  t.equal(lstatSync(join(opened.folder, 'proxy.sock')).mode & 0o777, 0o666, "the engine's to connect to, whoever it runs as");
  t.match(JSON.parse(readFileSync(join(opened.folder, 'network.json'), 'utf8')), { listeners: opened.listeners, entries: [{ text: 'api.example.com:443' }, {}, {}] }, 'what a restart opens again');
  t.equal(await ask(join(opened.folder, `forward-${port}.sock`), ''), 'from the host\n', 'a forwarded port leads to the host\'s loopback');
  const answer = await ask(join(opened.folder, 'proxy.sock'), 'CONNECT 10.9.9.9:22 HTTP/1.1\r\nHost: 10.9.9.9:22\r\n\r\n');
  t.match(answer, /^HTTP\/1\.1 403 /);
  t.match(refused, [['job-a', { host: '10.9.9.9', port: 22, reason: 'not_allowed' }]], 'the refusal is told for its job');
  const resolved = await ask(join(opened.folder, 'proxy.sock'), 'CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n');
  t.match(resolved, /^HTTP\/1\.1 403 /, 'an allowed name that resolves to a private address');
  t.match(refused.at(-1), ['job-a', { host: 'api.example.com', reason: 'address_refused', detail: /10\.0\.0\.5/ }]);

  await nets.close('job-a');
  t.notOk(existsSync(opened.folder), 'closed: its folder is gone');
});

t.test('opened again by the next daemon from its record; a job with none is not; a start sweeps what no job keeps', async (t) => {
  const dir = join(root, 'again');
  const first = networks(dir);
  const opened = first.open('job-b', entries('api.example.com:443'));
  first.open('job-c', entries('api.example.com:443'));
  await first.closeAll();
  t.ok(existsSync(join(opened.folder, 'network.json')), 'a stopping daemon leaves the folders for the next');
  t.notOk(existsSync(join(opened.folder, 'proxy.sock')), 'with nothing listening');
  const next = networks(dir);
  t.teardown(() => next.closeAll());
  t.ok(next.reopen('job-b'));
  t.ok(next.reopen('job-b'), 'open already: nothing to do');
  t.match(await ask(join(opened.folder, 'proxy.sock'), 'CONNECT x.example:1 HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 403 /, 'the proxy answers again');
  t.notOk(next.reopen('job-none'));
  await mkdir(join(dir, 'job-gone'));
  await next.sweep(async (jobId) => jobId === 'job-c');
  t.same(['job-b', 'job-c', 'job-gone'].map((id) => existsSync(join(dir, id))), [true, true, false], 'an open one and a kept one stay');
  await networks(join(root, 'nothing')).sweep(async () => false);
});

t.test('a network opened again for the next process of its job replaces the one before', async (t) => {
  const dir = join(root, 'next');
  const nets = networks(dir);
  t.teardown(() => nets.closeAll());
  nets.open('job-d', entries('a.example:443'));
  const second = nets.open('job-d', entries('b.example:443'));
  t.match(JSON.parse(readFileSync(join(second.folder, 'network.json'), 'utf8')), { entries: [{ text: 'b.example:443' }] });
  t.match(await ask(join(second.folder, 'proxy.sock'), 'CONNECT c.example:1 HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 403 /);
});
