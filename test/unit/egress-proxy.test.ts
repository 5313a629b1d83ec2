// The egress proxy (daemon/network/egress-proxy.ts): CONNECT tunnels and absolute-URI requests on
// a Unix socket, each target put to a policy, only the address it gives dialled. Its upstreams
// are trap servers on 127.0.0.1 that count what reaches them.
import t, { type Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { lstat, mkdtemp, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest, Agent, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EgressProxyError, listenEgressProxy, type EgressProxy, type ProxyOptions, type ProxyPolicy } from '../../daemon/network/egress-proxy.js';

// Unix socket paths hold 107 bytes: a short folder.
const dir = await mkdtemp(join(tmpdir(), 'ep-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
let names = 0;
const socketPath = (): string => join(dir, `p${(names += 1)}.sock`);

type Route = { address: string; family: 4 | 6 } | 'throws';

/** A policy that allows the targets of `routes` (`host:port` → where to dial) and refuses every other, recording what it is asked and told. */
function stubPolicy(routes: Record<string, Route>): ProxyPolicy & { asked: string[]; refusals: unknown[][] } {
  const asked: string[] = [];
  const refusals: unknown[][] = [];
  return {
    asked,
    refusals,
    async decide(host, port) {
      asked.push(`${host}:${port}`);
      const route = routes[`${host}:${port}`];
      if (route === 'throws') throw new Error('the list is unreadable');
      return route ?? { refused: 'not_listed', detail: `${host} is not on the job's list` };
    },
    refused: (...args) => void refusals.push(args),
  };
}
const local = { address: '127.0.0.1', family: 4 } as const;

async function startProxy(t: Test, policy: ProxyPolicy, options?: ProxyOptions): Promise<EgressProxy> {
  const proxy = await listenEgressProxy(socketPath(), policy, options);
  t.teardown(() => proxy.close());
  return proxy;
}

/** A raw TCP server that echoes what it gets, counting its connections; `open` holds those not yet closed. */
async function echoTrap(t: Test): Promise<{ port: number; connections: number; open: Set<Socket> }> {
  const trap = { port: 0, connections: 0, open: new Set<Socket>() };
  const server = createNetServer((socket) => {
    trap.connections += 1;
    trap.open.add(socket);
    socket.once('close', () => trap.open.delete(socket));
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  trap.port = (server.address() as AddressInfo).port;
  t.teardown(() => {
    for (const socket of trap.open) socket.destroy();
    server.close();
  });
  return trap;
}

const CHUNK = 64 * 1024;
const SIZE = 5 * 1024 * 1024;

/**
 * An HTTP server counting its connections. `/stream` hashes the body it gets (saying on `events`
 * when the first piece came), then answers with `download`: one piece, and the rest once the
 * test says the client has it. `/cut` dies in the middle of its body. Any other path answers
 * with what it saw (method, path, headers), and hop-by-hop headers of its own.
 */
async function httpTrap(t: Test): Promise<{ port: number; connections: number; events: EventEmitter; download: Buffer }> {
  const trap = { port: 0, connections: 0, events: new EventEmitter(), download: randomBytes(SIZE) };
  const server = createHttpServer((request, response) => {
    if (request.url === '/cut') {
      response.writeHead(200, { 'Content-Length': '100' });
      response.write('0123456789', () => response.socket?.destroy());
      return;
    }
    const hash = createHash('sha256');
    let length = 0;
    request.once('data', () => trap.events.emit('upload-started'));
    request.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      length += chunk.length;
    });
    request.on('end', () => {
      if (request.url !== '/stream') {
        response.writeHead(200, { 'Content-Type': 'application/json', 'X-Up-Private': '1', 'X-Up-Kept': '1', 'Keep-Alive': 'timeout=7', Connection: 'keep-alive, x-up-private' });
        response.end(JSON.stringify({ method: request.method, url: request.url, headers: request.rawHeaders, length }));
        return;
      }
      response.writeHead(200, { 'X-Upload-Sha256': hash.digest('hex'), 'X-Upload-Length': String(length) });
      response.write(trap.download.subarray(0, CHUNK));
      trap.events.once('download-started', () => response.end(trap.download.subarray(CHUNK)));
    });
  });
  server.on('connection', () => (trap.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  trap.port = (server.address() as AddressInfo).port;
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return trap;
}

/** A raw connection to the proxy, and what it has received so far. */
function rawClient(path: string): { socket: Socket; until(text: string): Promise<string>; closed: Promise<string> } {
  const socket = connect(path);
  socket.setEncoding('latin1');
  socket.on('error', () => undefined);
  let data = '';
  let wake = (): void => undefined;
  socket.on('data', (chunk: string) => {
    data += chunk;
    wake();
  });
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(data)));
  socket.once('close', () => wake());
  return {
    socket,
    async until(text) {
      while (!data.includes(text)) {
        if (socket.destroyed) throw new Error(`closed before ${JSON.stringify(text)}; got ${JSON.stringify(data)}`);
        await new Promise<void>((resolve) => (wake = resolve));
      }
      return data;
    },
    closed,
  };
}

/** The status, headers (lower-case names) and body of a raw HTTP response. */
function parseRaw(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reused: boolean;
}

/** One request through the proxy at `path` (a fresh connection unless an agent is given). */
async function send(path: string, options: RequestOptions, body?: string): Promise<Reply> {
  const request = httpRequest({ agent: false, ...options, socketPath: path });
  request.end(body);
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString(), reused: request.reusedSocket };
}

t.test('CONNECT to an allowed target: 200, then bytes both ways, those sent with the request first', async (t) => {
  const trap = await echoTrap(t);
  const policy = stubPolicy({ [`127.0.0.1:${trap.port}`]: local, [`::1:${trap.port}`]: local });
  const proxy = await startProxy(t, policy);
  const client = rawClient(proxy.path);
  client.socket.write(`CONNECT 127.0.0.1:${trap.port} HTTP/1.1\r\nHost: 127.0.0.1:${trap.port}\r\n\r\nearly bytes|`);
  t.equal(await client.until('early bytes|'), 'HTTP/1.1 200 Connection Established\r\n\r\nearly bytes|');
  client.socket.write('later bytes');
  await client.until('later bytes');
  client.socket.end();
  t.match(await client.closed, /later bytes$/, 'the end is passed on, and the echo\'s end comes back');
  t.equal(trap.connections, 1);
  const v6 = rawClient(proxy.path);
  v6.socket.write(`CONNECT [::1]:${trap.port} HTTP/1.1\r\n\r\nv6`);
  await v6.until('v6');
  t.same(policy.asked, [`127.0.0.1:${trap.port}`, `::1:${trap.port}`], 'an IPv6 authority reaches the policy without its brackets');
});

t.test('a tunnel torn down at one end is torn down at the other', async (t) => {
  const trap = await echoTrap(t);
  const proxy = await startProxy(t, stubPolicy({ [`127.0.0.1:${trap.port}`]: local }));
  const open = async (): Promise<{ client: ReturnType<typeof rawClient>; upstream: Socket }> => {
    const client = rawClient(proxy.path);
    client.socket.write(`CONNECT 127.0.0.1:${trap.port} HTTP/1.1\r\n\r\nx`);
    await client.until('x');
    const upstream = [...trap.open].at(-1);
    if (upstream === undefined) throw new Error('the trap has no connection');
    return { client, upstream };
  };
  const first = await open();
  first.client.socket.destroy();
  await once(first.upstream, 'close');
  t.pass('the client gone: the upstream connection closes');
  const second = await open();
  second.upstream.destroy();
  await second.client.closed;
  t.pass('the upstream gone: the client connection closes');
});

t.test('CONNECT to a refused target: 403 with the reason, nothing dialled, the policy told', async (t) => {
  const trap = await echoTrap(t);
  const policy = stubPolicy({});
  const proxy = await startProxy(t, policy);
  const client = rawClient(proxy.path);
  client.socket.write(`CONNECT 127.0.0.1:${trap.port} HTTP/1.1\r\n\r\n`);
  const answer = parseRaw(await client.closed);
  t.equal(answer.status, 403);
  t.equal(answer.headers['x-skilld-refused'], 'not_listed');
  t.equal(answer.body, `refused 127.0.0.1:${trap.port}: 127.0.0.1 is not on the job's list\n`);
  t.same(policy.refusals, [['127.0.0.1', trap.port, 'not_listed', '127.0.0.1 is not on the job\'s list']]);
  t.equal(trap.connections, 0);
});

t.test('CONNECT to a port nothing listens on: 502 naming the error, not a refusal', async (t) => {
  const dead = createNetServer();
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  const port = (dead.address() as AddressInfo).port;
  await new Promise((resolve) => dead.close(resolve));
  const proxy = await startProxy(t, stubPolicy({ [`127.0.0.1:${port}`]: local }));
  const client = rawClient(proxy.path);
  client.socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
  const answer = parseRaw(await client.closed);
  t.equal(answer.status, 502);
  t.notOk('x-skilld-refused' in answer.headers);
  t.match(answer.body, /ECONNREFUSED/);
});

t.test('CONNECT to a bad authority: 400, and the policy is never asked', async (t) => {
  const policy = stubPolicy({});
  const proxy = await startProxy(t, policy);
  for (const authority of ['example.com', 'example.com:', 'example.com:0', 'example.com:65536', '::1:443', '[::zz]:443', 'user@example.com:443', 'a\\b:443']) {
    const client = rawClient(proxy.path);
    client.socket.write(`CONNECT ${authority} HTTP/1.1\r\n\r\n`);
    t.equal(parseRaw(await client.closed).status, 400, authority);
  }
  t.same(policy.asked, []);
});

t.test('a policy that fails, or gives a name to dial rather than an address: 500, nothing dialled', async (t) => {
  const trap = await httpTrap(t);
  const proxy = await startProxy(t, stubPolicy({ [`broken.example:${trap.port}`]: 'throws', [`named.example:${trap.port}`]: { address: 'localhost', family: 4 } }));
  for (const host of ['broken.example', 'named.example']) {
    const client = rawClient(proxy.path);
    client.socket.write(`CONNECT ${host}:${trap.port} HTTP/1.1\r\n\r\n`);
    t.equal(parseRaw(await client.closed).status, 500, `CONNECT ${host}`);
    t.equal((await send(proxy.path, { path: `http://${host}:${trap.port}/x` })).status, 500, `GET http://${host}`);
  }
  t.equal(trap.connections, 0);
});

t.test('a forwarded request: the method, the path, the query, the body and the Host kept, hop-by-hop headers dropped both ways', async (t) => {
  const trap = await httpTrap(t);
  const proxy = await startProxy(t, stubPolicy({ [`127.0.0.1:${trap.port}`]: local }));
  const reply = await send(proxy.path, {
    method: 'PUT',
    path: `http://127.0.0.1:${trap.port}/x?y=1`,
    headers: { Host: 'elsewhere.example', Connection: 'keep-alive, X-Private', 'X-Private': 'secret', 'Proxy-Connection': 'keep-alive', 'Proxy-Authorization': 'Basic YTpi', 'Keep-Alive': 'timeout=5', TE: 'trailers', 'Transfer-Encoding': 'chunked', Trailer: 'X-Sum', 'X-Kept': 'yes' },
  }, 'a body of 20 letters');
  t.equal(reply.status, 200);
  const seen = JSON.parse(reply.body) as { method: string; url: string; headers: string[]; length: number };
  t.equal(seen.method, 'PUT');
  t.equal(seen.url, '/x?y=1');
  t.equal(seen.length, 20);
  const names = seen.headers.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
  for (const name of ['x-private', 'proxy-connection', 'proxy-authorization', 'keep-alive', 'te', 'trailer']) t.notOk(names.includes(name), `${name} not passed on`);
  t.equal(seen.headers[seen.headers.findIndex((name) => name.toLowerCase() === 'host') + 1], `127.0.0.1:${trap.port}`, 'the Host is the URI\'s, the one the policy judged');
  t.ok(names.includes('x-kept'));
  t.equal(names.filter((name) => name === 'host').length, 1);
  t.equal(reply.headers['x-up-kept'], '1');
  t.notOk('x-up-private' in reply.headers, 'a header the upstream\'s Connection names is dropped');
  t.notOk('keep-alive' in reply.headers);
});

t.test('a forwarded POST streams 5 MiB each way: the upstream has the first piece before the rest is sent, and the client before the upstream sends the rest', async (t) => {
  const trap = await httpTrap(t);
  const proxy = await startProxy(t, stubPolicy({ [`127.0.0.1:${trap.port}`]: local }));
  const upload = randomBytes(SIZE);
  const request = httpRequest({ socketPath: proxy.path, agent: false, method: 'POST', path: `http://127.0.0.1:${trap.port}/stream`, headers: { Host: `127.0.0.1:${trap.port}` } });
  const responded = once(request, 'response');
  const started = once(trap.events, 'upload-started');
  request.write(upload.subarray(0, CHUNK));
  await started;
  for (let offset = CHUNK; offset < SIZE; offset += CHUNK) if (!request.write(upload.subarray(offset, offset + CHUNK))) await once(request, 'drain');
  request.end();
  const [response] = (await responded) as [IncomingMessage];
  t.equal(response.headers['x-upload-length'], String(SIZE));
  t.equal(response.headers['x-upload-sha256'], createHash('sha256').update(upload).digest('hex'));
  response.once('data', () => trap.events.emit('download-started'));
  const hash = createHash('sha256');
  for await (const chunk of response) hash.update(chunk as Buffer);
  t.equal(hash.digest('hex'), createHash('sha256').update(trap.download).digest('hex'));
});

t.test('one kept-alive connection: a refused request, then an allowed one, each decided on its own', async (t) => {
  const trap = await httpTrap(t);
  const policy = stubPolicy({ [`127.0.0.1:${trap.port}`]: local });
  const proxy = await startProxy(t, policy);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const refused = await send(proxy.path, { agent, path: 'http://blocked.example/' });
  t.equal(refused.status, 403);
  t.equal(refused.headers['x-skilld-refused'], 'not_listed');
  t.equal(refused.body, 'refused blocked.example: blocked.example is not on the job\'s list\n');
  const allowed = await send(proxy.path, { agent, path: `http://127.0.0.1:${trap.port}/y` });
  t.equal(allowed.status, 200);
  t.ok(allowed.reused, 'the same connection');
  t.same(policy.asked, ['blocked.example:80', `127.0.0.1:${trap.port}`]);
  t.same(policy.refusals, [['blocked.example', 80, 'not_listed', 'blocked.example is not on the job\'s list']]);
});

t.test('not forwarded: an https URI (400), an upgrade (501); an upstream that is down (502) or dies mid-body (cut, never whole)', async (t) => {
  const trap = await httpTrap(t);
  const policy = stubPolicy({ [`127.0.0.1:${trap.port}`]: local, '127.0.0.1:1': local });
  const proxy = await startProxy(t, policy);
  const https = await send(proxy.path, { path: `https://127.0.0.1:${trap.port}/x` });
  t.equal(https.status, 400);
  t.match(https.body, /only http:\/\/ URIs are forwarded, not https:\/\//);
  const upgrade = await send(proxy.path, { path: `http://127.0.0.1:${trap.port}/ws`, headers: { Connection: 'Upgrade', Upgrade: 'websocket' } });
  t.equal(upgrade.status, 501);
  t.equal(trap.connections, 0);
  t.same(policy.asked, []);
  const down = await send(proxy.path, { path: 'http://127.0.0.1:1/' });
  t.equal(down.status, 502);
  t.match(down.body, /could not reach 127\.0\.0\.1:1: ECONNREFUSED/);
  const request = httpRequest({ socketPath: proxy.path, agent: false, path: `http://127.0.0.1:${trap.port}/cut` });
  const outcome = new Promise<string>((resolve) => {
    request.on('error', () => resolve('error'));
    request.on('response', (response) => {
      response.on('error', () => undefined);
      response.on('close', () => resolve(response.complete ? 'complete' : 'cut'));
      response.resume();
    });
  });
  request.end();
  t.not(await outcome, 'complete');
});

t.test('a request in origin form goes to the origin handler, or gets a 400 without one', async (t) => {
  const gateway = await startProxy(t, stubPolicy({}), {
    origin: (request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end(`gateway ${request.method} ${request.url}`);
    },
  });
  const handed = await send(gateway.path, { method: 'POST', path: '/v1/messages' }, '{}');
  t.same([handed.status, handed.body], [200, 'gateway POST /v1/messages']);
  const plain = await startProxy(t, stubPolicy({}));
  const refused = await send(plain.path, { path: '/v1/messages' });
  t.equal(refused.status, 400);
  t.match(refused.body, /this is an egress proxy/);
});

t.test('the socket file: its mode, a stale socket replaced, anything else at the path refused', async (t) => {
  const plain = await startProxy(t, stubPolicy({}));
  t.equal((await stat(plain.path)).mode & 0o777, 0o600, 'the default');
  const shared = await startProxy(t, stubPolicy({}), { mode: 0o666 });
  t.equal((await stat(shared.path)).mode & 0o777, 0o666);

  // A socket left behind: bound, renamed to the path, and its server gone (closing unlinks only the name it bound).
  const stale = socketPath();
  const old = createNetServer();
  await new Promise<void>((resolve) => old.listen(`${stale}.old`, resolve));
  await rename(`${stale}.old`, stale);
  await new Promise((resolve) => old.close(resolve));
  t.ok((await lstat(stale)).isSocket());
  const again = await listenEgressProxy(stale, stubPolicy({}));
  t.teardown(() => again.close());
  t.equal((await send(stale, { path: '/x' })).status, 400, 'the new proxy answers on it');

  const file = socketPath();
  await writeFile(file, 'not a socket');
  t.throws(() => listenEgressProxy(file, stubPolicy({})), EgressProxyError);
  t.ok((await lstat(file)).isFile(), 'the file is left as it was');
  const link = socketPath();
  await symlink(plain.path, link);
  t.throws(() => listenEgressProxy(link, stubPolicy({})), /is not a socket/);
  t.ok((await lstat(link)).isSymbolicLink(), 'a link, even to a socket, is not followed or removed');
  t.throws(() => listenEgressProxy(join(dir, 'none', 'p.sock'), stubPolicy({})), { name: 'EgressProxyError', message: /cannot listen on/ });
});

t.test('close() ends an open tunnel at both ends, and removes the socket file', async (t) => {
  const trap = await echoTrap(t);
  const proxy = await listenEgressProxy(socketPath(), stubPolicy({ [`127.0.0.1:${trap.port}`]: local }));
  const client = rawClient(proxy.path);
  client.socket.write(`CONNECT 127.0.0.1:${trap.port} HTTP/1.1\r\n\r\nping`);
  await client.until('ping');
  const [upstream] = [...trap.open];
  const upstreamClosed = upstream === undefined ? Promise.reject(new Error('no upstream')) : once(upstream, 'close');
  await proxy.close();
  await client.closed;
  await upstreamClosed;
  t.equal(trap.open.size, 0);
  await t.rejects(lstat(proxy.path), { code: 'ENOENT' });
  await proxy.close();
  t.pass('a second close() resolves too');
});
