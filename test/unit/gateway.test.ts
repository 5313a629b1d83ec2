// The model gateway (daemon/network/gateway.ts) on a job's proxy socket: the job's token swapped
// for the key in every place an engine puts it, the answer streamed back with its usage read,
// 429/503/529 retried on the fake clock, 401/403 and a spent budget told as the job's failure.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { listenEgressProxy } from '../../daemon/network/egress-proxy.js';
import { gatewayHandler, openUpstream, type GatewayHooks, type ProviderFailure, type ProviderRetry } from '../../daemon/network/gateway.js';
import { newGatewayToken, swapToken, tokenHash } from '../../daemon/network/gateway-token.js';
import { retryAfterMs, retryWait } from '../../daemon/network/gateway-retry.js';
import { providerQuote } from '../../daemon/network/provider-quote.js';
import type { Usage } from '../../daemon/model/usage.js';
import { FakeClock } from '../helpers/fake-clock.js';

const KEY = 'sk-real-provider-key-0123456789';
const dir = await mkdtemp(join(tmpdir(), 'gw-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
let names = 0;

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Answer = (seen: Seen, response: ServerResponse) => void;

/** A provider on 127.0.0.1 that records each request and answers with the next of `answers` (the last repeats). */
async function provider(t: Test, answers: Answer[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      const one = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() };
      seen.push(one);
      (answers[Math.min(seen.length, answers.length) - 1] as Answer)(one, response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (_seen, response) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};
const anthropicStream: Answer = (_seen, response) => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 7, cache_read_input_tokens: 3, cache_creation_input_tokens: 0, output_tokens: 1 } } })}\n\n`);
  response.end(`event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 11 } })}\n\n`);
};

interface Told {
  retries: ProviderRetry[];
  failures: ProviderFailure[];
  used: Promise<Usage>[];
  refused: string[];
}

/** A gateway for one job in front of `upstream`, on a proxy socket of its own; returns how to call it and what it told. */
async function gateway(t: Test, upstream: string, options: { retryMaxSec?: number; clock?: FakeClock } = {}): Promise<{ token: string; told: Told; call: (path: string, headers: Record<string, string>, body?: string) => Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> }> {
  const token = newGatewayToken();
  const told: Told = { retries: [], failures: [], used: [], refused: [] };
  const hooks: GatewayHooks = {
    retrying: (retry) => void told.retries.push(retry),
    failed: (failure) => void told.failures.push(failure),
    used: (usage) => void told.used.push(usage),
    refused: (detail) => void told.refused.push(detail),
  };
  const up = openUpstream({ upstream, api_key_env: 'KEY', retry_max_sec: options.retryMaxSec ?? 120 }, KEY);
  const path = join(dir, `g${(names += 1)}.sock`);
  const proxy = listenEgressProxy(path, { decide: async () => ({ refused: 'no', detail: 'no' }), refused: () => undefined }, { origin: gatewayHandler(up, tokenHash(token), hooks, options.clock ?? new FakeClock(), () => 0.5) });
  t.teardown(async () => {
    await proxy.close();
    up.agent.destroy();
  });
  const call = (url: string, headers: Record<string, string>, body = '{}'): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> =>
    new Promise((resolve, reject) => {
      const request = httpRequest({ socketPath: path, method: 'POST', path: url, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      });
      request.once('error', reject);
      request.end(body);
    });
  return { token, told, call };
}

t.test('the token is swapped for the key in the place the engine put it, and the answer streamed back with its usage', async (t) => {
  const up = await provider(t, [anthropicStream]);
  const gw = await gateway(t, up.url);
  const answer = await gw.call('/v1/messages?beta=true', { 'x-api-key': gw.token, 'anthropic-version': '2023-06-01' }, '{"model":"m"}');
  t.equal(answer.status, 200);
  t.match(answer.body, /message_delta/);
  t.equal(up.seen[0]?.headers['x-api-key'], KEY, 'the provider sees the real key');
  t.equal(up.seen[0]?.headers['anthropic-version'], '2023-06-01', "the engine's other headers pass");
  t.equal(up.seen[0]?.url, '/v1/messages?beta=true');
  t.equal(up.seen[0]?.body, '{"model":"m"}');
  t.same(await Promise.all(gw.told.used), [{ input_tokens: 10, output_tokens: 11, cached_input_tokens: 3, requests: 1 }]);

  await gw.call('/v1/responses', { authorization: `Bearer ${gw.token}` });
  t.equal(up.seen[1]?.headers.authorization, `Bearer ${KEY}`);
  await gw.call(`/v1beta/models/m:generateContent?alt=sse&key=${gw.token}`, { 'x-goog-api-key': gw.token });
  t.equal(up.seen[2]?.headers['x-goog-api-key'], KEY);
  t.equal(new URL(up.seen[2]?.url ?? '', 'http://x').searchParams.get('key'), KEY);
  t.equal(gw.told.used.length, 3, 'each answered call counts');
});

t.test('a call without the job token, or with a key of its own beside it, never reaches the provider', async (t) => {
  const up = await provider(t, [json(200, {})]);
  const gw = await gateway(t, up.url);
  const other = await gateway(t, up.url);
  for (const headers of [{}, { 'x-api-key': 'sk-someone-else' }, { 'x-api-key': other.token }, { 'x-api-key': gw.token, authorization: 'Bearer sk-own' }]) {
    const answer = await gw.call('/v1/messages', headers);
    t.equal(answer.status, 401, JSON.stringify(headers));
  }
  t.equal((await gw.call(`/v1/x?key=wrong`, { 'x-api-key': gw.token })).status, 401, 'a key parameter that is not the token');
  t.equal(up.seen.length, 0);
  t.equal(gw.told.refused.length, 5);
  t.notMatch(gw.told.refused.join(' '), /wrong/, 'the query, which may hold a key, is not told');
});

t.test('429 and 529 are retried after Retry-After, each retry told; then the answer passes', async (t) => {
  const clock = new FakeClock();
  const up = await provider(t, [json(429, { error: { message: 'slow down' } }, { 'retry-after': '2' }), json(529, { type: 'error', error: { type: 'overloaded_error', message: 'busy' } }), anthropicStream]);
  const gw = await gateway(t, up.url, { clock });
  const answered = gw.call('/v1/messages', { 'x-api-key': gw.token }, '{"n":1}');
  while (gw.told.retries.length < 1) await new Promise((resolve) => setImmediate(resolve));
  t.same(gw.told.retries[0], { status: 429, retry: 1, wait_ms: 2200 }, 'Retry-After 2 s, a tenth more of jitter');
  clock.advance(2200);
  while (gw.told.retries.length < 2) await new Promise((resolve) => setImmediate(resolve));
  t.same(gw.told.retries[1], { status: 529, retry: 2, wait_ms: 2200 }, 'no Retry-After: 2 s for the second retry');
  clock.advance(2200);
  const answer = await answered;
  t.equal(answer.status, 200);
  t.same(up.seen.map((one) => one.body), ['{"n":1}', '{"n":1}', '{"n":1}'], 'the same request each time');
  t.same(gw.told.failures, []);
  t.same(await Promise.all(gw.told.used), [{ input_tokens: 10, output_tokens: 11, cached_input_tokens: 3, requests: 1 }]);
});

t.test('a rate limit past retry_max_sec reaches the engine and is told as PROVIDER_RATE_LIMITED', async (t) => {
  const clock = new FakeClock();
  const up = await provider(t, [json(429, { error: { message: 'quota exceeded' } }, { 'retry-after': '1' })]);
  const gw = await gateway(t, up.url, { clock, retryMaxSec: 3 });
  const answered = gw.call('/v1/messages', { 'x-api-key': gw.token });
  for (let n = 1; n <= 2; n += 1) {
    while (gw.told.retries.length < n) await new Promise((resolve) => setImmediate(resolve));
    clock.advance(gw.told.retries[n - 1]?.wait_ms ?? 0);
  }
  const answer = await answered;
  t.equal(answer.status, 429);
  t.equal(up.seen.length, 3, 'a first call and two retries fit in 3 s of waits of 1.1 s');
  t.equal(gw.told.failures[0]?.code, 'PROVIDER_RATE_LIMITED');
  t.match(gw.told.failures[0]?.message, /answered 429 after 2 retries .*quota exceeded/);
  t.equal(gw.told.retries.length, 2);
});

t.test('401 and 403 reach the engine and are told as PROVIDER_AUTH_FAILED, quoting the provider and never the key', async (t) => {
  for (const status of [401, 403]) {
    const up = await provider(t, [json(status, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` } })]);
    const gw = await gateway(t, up.url);
    const answer = await gw.call('/v1/messages', { 'x-api-key': gw.token });
    t.equal(answer.status, status);
    t.equal(gw.told.failures[0]?.code, 'PROVIDER_AUTH_FAILED');
    t.match(gw.told.failures[0]?.message, new RegExp(`\\(${status}\\): invalid x-api-key \\[key\\]`));
    t.notMatch(gw.told.failures[0]?.message, KEY);
  }
});

t.test('a compressed answer is passed as it came, and its usage still read', async (t) => {
  const body = gzipSync(JSON.stringify({ usage: { input_tokens: 5, output_tokens: 2, input_tokens_details: { cached_tokens: 1 } } }));
  const up = await provider(t, [(_seen, response) => {
    // The names as a provider may write them: the gateway finds them whatever their case.
    response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    response.end(body);
  }]);
  const gw = await gateway(t, up.url);
  const answer = await gw.call('/v1/responses', { authorization: `Bearer ${gw.token}` });
  t.equal(answer.headers['content-encoding'], 'gzip');
  t.same(await Promise.all(gw.told.used), [{ input_tokens: 5, output_tokens: 2, cached_input_tokens: 1, requests: 1 }]);
});

t.test('an upstream that cannot be reached is a 502 for the engine, not a failure of the job', async (t) => {
  const gw = await gateway(t, 'http://127.0.0.1:1');
  const answer = await gw.call('/v1/messages', { 'x-api-key': gw.token });
  t.equal(answer.status, 502);
  t.same(gw.told.failures, []);
});

t.test('the waits: Retry-After in both forms, doubling without it, never past the budget', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.equal(retryAfterMs('3', now), 3000);
  t.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
  t.equal(retryAfterMs('soon', now), null);
  t.equal(retryAfterMs(undefined, now), null);
  t.equal(retryWait(undefined, 1, now, 60_000, () => 0), 1000);
  t.equal(retryWait(undefined, 3, now, 60_000, () => 0), 4000);
  t.equal(retryWait(undefined, 10, now, 60_000, () => 0), 30_000, 'at most 30 s apart');
  t.equal(retryWait('10', 1, now, 60_000, () => 1), 12_000, 'up to a fifth more than asked');
  t.equal(retryWait('10', 1, now, 11_000, () => 1), 11_000, 'jitter stops at the budget');
  t.equal(retryWait('10', 1, now, 9_000, () => 0), null, 'a wait past the budget: no retry');
});

t.test('the token in every place at once, and the quote of an answer that is not JSON', async (t) => {
  const token = newGatewayToken();
  const hash = tokenHash(token);
  t.same(swapToken(['X-Api-Key', token, 'Accept', '*/*'], '/v1/m', hash, KEY), { headers: ['X-Api-Key', KEY, 'Accept', '*/*'], path: '/v1/m' });
  t.equal(swapToken(['Accept', '*/*'], '/v1/m?key=', hash, KEY), null);
  t.equal(swapToken(['Authorization', `Basic ${token}`], '/v1/m', hash, KEY), null, 'a bearer token only');
  // Once matched, a token is remembered for its hash: neither another job's token nor one a character off passes for it.
  const other = newGatewayToken();
  const near = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
  t.equal(swapToken(['X-Api-Key', other], '/v1/m', hash, KEY), null, "another job's token");
  t.equal(swapToken(['X-Api-Key', near], '/v1/m', hash, KEY), null, 'a token a character off');
  t.equal(swapToken(['X-Api-Key', token], '/v1/m', tokenHash(other), KEY), null, "this token for another job's hash");
  t.not(swapToken(['X-Api-Key', other], '/v1/m', tokenHash(other), KEY), null);
  t.not(swapToken(['X-Api-Key', token], '/v1/m', hash, KEY), null, 'and the first still passes');
  t.equal(providerQuote(Buffer.from('\n upstream connect error\nmore'), 503, KEY), 'upstream connect error');
  t.equal(providerQuote(Buffer.from(''), 401, KEY), 'HTTP 401 with no message');
  t.equal(providerQuote(Buffer.from(JSON.stringify([{ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }])), 429, KEY), 'Resource has been exhausted');
  t.equal(providerQuote(Buffer.from(JSON.stringify({ error: { message: 'x'.repeat(400) } })), 400, KEY).length, 300);
});

t.test('many retries of one call hold one listener on the engine\'s side', async (t) => {
  const clock = new FakeClock();
  const warnings: string[] = [];
  const warned = (warning: Error): void => void warnings.push(warning.name);
  process.on('warning', warned);
  t.teardown(() => process.off('warning', warned));
  const limited = Array.from({ length: 12 }, () => json(429, { error: { message: 'wait' } }, { 'retry-after': '0' }));
  const up = await provider(t, [...limited, anthropicStream]);
  const gw = await gateway(t, up.url, { clock });
  const answered = gw.call('/v1/messages', { 'x-api-key': gw.token });
  for (let n = 1; n <= 12; n += 1) {
    while (gw.told.retries.length < n) await new Promise((resolve) => setImmediate(resolve));
    clock.advance(gw.told.retries[n - 1]?.wait_ms ?? 0);
  }
  t.equal((await answered).status, 200);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(warnings, [], 'no listener piles up');
});

/** A gateway as a plain server on a socket of its own, `watch` given each response as the gateway takes it. */
async function bareGateway(t: Test, upstream: string, token: string, watch: (response: ServerResponse) => void): Promise<{ path: string; used: Promise<Usage>[] }> {
  const used: Promise<Usage>[] = [];
  const hooks: GatewayHooks = { retrying: () => undefined, failed: () => undefined, used: (usage) => void used.push(usage), refused: () => undefined };
  const up = openUpstream({ upstream, api_key_env: 'KEY', retry_max_sec: 120 }, KEY);
  const handler = gatewayHandler(up, tokenHash(token), hooks, new FakeClock(), () => 0.5);
  const server = createServer((request, response) => {
    watch(response);
    handler(request, response);
  });
  const path = join(dir, `b${(names += 1)}.sock`);
  server.listen(path);
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
    up.agent.destroy();
  });
  return { path, used };
}

t.test('a short answer leaves the gateway in one write, its end with its body', async (t) => {
  const up = await provider(t, [anthropicStream]);
  const token = newGatewayToken();
  let writes = 0;
  const gw = await bareGateway(t, up.url, token, (response) => {
    const socket = response.socket as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    const [write, writev] = [socket._write.bind(socket), socket._writev.bind(socket)];
    socket._write = (...args) => void ((writes += 1), write(...args));
    socket._writev = (...args) => void ((writes += 1), writev(...args));
  });
  const body = await new Promise<string>((resolve, reject) => {
    const request = httpRequest({ socketPath: gw.path, method: 'POST', path: '/v1/messages', headers: { 'x-api-key': token } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolve(Buffer.concat(chunks).toString()));
    });
    request.once('error', reject);
    request.end('{}');
  });
  t.match(body, /message_delta/);
  t.equal(writes, 1, 'head, body and the chunked coding’s end in one write');
  t.same(await Promise.all(gw.used), [{ input_tokens: 10, output_tokens: 11, cached_input_tokens: 3, requests: 1 }]);
});

t.test('a long answer is passed whole to an engine that reads slowly, and metered', async (t) => {
  const frame = `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', delta: { text: 'x'.repeat(150) } })}\n\n`;
  const frames = 40_000;
  const up = await provider(t, [(_seen, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    let left = frames;
    const more = (): void => {
      while (left > 0) {
        left -= 50;
        if (!response.write(frame.repeat(50))) return void response.once('drain', more);
      }
      response.end(`event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 99 } })}\n\n`);
    };
    more();
  }]);
  const gw = await gateway(t, up.url);
  const received = await new Promise<number>((resolve, reject) => {
    const request = httpRequest({ socketPath: join(dir, `g${names}.sock`), method: 'POST', path: '/v1/messages', headers: { 'x-api-key': gw.token } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // Now and then the engine stops reading a while: the gateway must hold the provider back, not lose bytes.
        if (bytes % 7 === 0) {
          response.pause();
          setImmediate(() => response.resume());
        }
      });
      response.once('end', () => resolve(bytes));
    });
    request.once('error', reject);
    request.end('{}');
  });
  const tail = `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 99 } })}\n\n`;
  t.equal(received, frames * Buffer.byteLength(frame) + Buffer.byteLength(tail));
  t.same(await Promise.all(gw.told.used), [{ input_tokens: 0, output_tokens: 99, cached_input_tokens: 0, requests: 1 }]);
});

t.test('a provider that dies mid-answer: the engine sees a cut, never a whole body', async (t) => {
  const up = await provider(t, [(_seen, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('event: ping\ndata: {}\n\n');
    setImmediate(() => response.destroy());
  }]);
  const gw = await gateway(t, up.url);
  const outcome = await new Promise<string>((resolve) => {
    const request = httpRequest({ socketPath: join(dir, `g${names}.sock`), method: 'POST', path: '/v1/messages', headers: { 'x-api-key': gw.token } }, (response) => {
      response.resume();
      response.once('end', () => resolve('whole'));
      response.once('error', () => resolve('cut'));
      response.once('aborted', () => resolve('cut'));
    });
    request.once('error', () => resolve('cut'));
    request.end('{}');
  });
  t.equal(outcome, 'cut');
});

t.test('an engine that goes away mid-answer ends the call to the provider', async (t) => {
  let providerSide: ServerResponse | null = null;
  const up = await provider(t, [(_seen, response) => {
    providerSide = response;
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('event: ping\ndata: {}\n\n');
  }]);
  const gw = await gateway(t, up.url);
  const request = httpRequest({ socketPath: join(dir, `g${names}.sock`), method: 'POST', path: '/v1/messages', headers: { 'x-api-key': gw.token } }, (response) => {
    response.once('data', () => request.destroy());
    response.on('error', () => undefined);
  });
  request.on('error', () => undefined);
  request.end('{}');
  while (providerSide === null) await new Promise((resolve) => setImmediate(resolve));
  const side = providerSide as ServerResponse;
  if (!side.destroyed) await once(side, 'close');
  t.ok(side.destroyed, "the provider's side of the call is closed");
});
