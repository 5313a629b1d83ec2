// The sender (daemon/notify/sender.ts) against real receivers on 127.0.0.1: one POST with the
// headers and body given, a 2xx delivers, a redirect is not followed, no answer within the
// attempt's time (on a fake clock) is a failure, and so is a refused connection.
import t from 'tap';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ATTEMPT_TIMEOUT_MS, delivered, httpSender } from '../../daemon/notify/sender.js';
import { FakeClock } from '../helpers/fake-clock.js';

interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A receiver on 127.0.0.1 that keeps each request and answers with `answer`. */
async function receiver(answer: (res: ServerResponse, hit: Hit) => void): Promise<{ url: string; hits: Hit[]; arrived(): Promise<Hit>; server: Server }> {
  const hits: Hit[] = [];
  const waiters: Array<(hit: Hit) => void> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      hits.push(hit);
      for (const waiter of waiters.splice(0)) waiter(hit);
      answer(res, hit);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, server, arrived: () => new Promise((resolve) => waiters.push(resolve)) };
}

const headers = { 'Content-Type': 'application/json', 'X-Skilld-Event': 'failed', 'X-Skilld-Delivery': 'd-1' };

t.test('one POST with the headers and the body as given; 204 is delivered', async (t) => {
  const server = await receiver((res) => res.writeHead(204).end());
  const outcome = await httpSender(new FakeClock())({ url: `${server.url}/in/skilld?token=x`, body: '{"event":"failed"}', headers }, new AbortController().signal);
  t.same(outcome, { status: 204, error: null });
  t.ok(delivered(outcome));
  const [hit] = server.hits;
  t.equal(hit?.method, 'POST');
  t.equal(hit?.url, '/in/skilld?token=x', 'the query is sent, though never shown');
  t.equal(hit?.body, '{"event":"failed"}');
  t.equal(hit?.headers['x-skilld-delivery'], 'd-1');
  t.equal(hit?.headers['content-length'], '18');
});

t.test('credentials in the URL go as basic auth', async (t) => {
  const server = await receiver((res) => res.writeHead(200).end('ok'));
  const outcome = await httpSender(new FakeClock())({ url: server.url.replace('http://', 'http://bot:p%40ss@'), body: '{}', headers }, new AbortController().signal);
  t.equal(outcome.status, 200);
  t.equal(server.hits[0]?.headers.authorization, `Basic ${Buffer.from('bot:p@ss').toString('base64')}`);
});

t.test('a redirect is not followed and counts as a failure', async (t) => {
  const elsewhere = await receiver((res) => res.writeHead(204).end());
  const server = await receiver((res) => res.writeHead(307, { Location: `${elsewhere.url}/taken` }).end());
  const outcome = await httpSender(new FakeClock())({ url: server.url, body: '{}', headers }, new AbortController().signal);
  t.same(outcome, { status: 307, error: null });
  t.notOk(delivered(outcome));
  t.equal(elsewhere.hits.length, 0, 'the redirect target heard nothing');
});

t.test('500 is a failure with its status', async (t) => {
  const server = await receiver((res) => res.writeHead(500).end('down'));
  const outcome = await httpSender(new FakeClock())({ url: server.url, body: '{}', headers }, new AbortController().signal);
  t.same(outcome, { status: 500, error: null });
  t.notOk(delivered(outcome));
});

t.test('no answer within the attempt\'s time (on the injected clock) is a failure, and the connection is let go', async (t) => {
  let hold!: (res: ServerResponse) => void;
  const held = new Promise<ServerResponse>((resolve) => (hold = resolve));
  const server = await receiver((res) => hold(res));
  const clock = new FakeClock();
  const sending = httpSender(clock)({ url: server.url, body: '{}', headers }, new AbortController().signal);
  const res = await held;
  const closed = once(res, 'close');
  clock.advance(ATTEMPT_TIMEOUT_MS - 1);
  clock.advance(1);
  t.same(await sending, { status: null, error: 'no answer within 10 s' });
  await closed;
  t.notOk(res.writableFinished, 'the receiver never answered, and its connection closed');
});

t.test('a refused connection is a failure that says so; a dropped attempt says it was dropped', async (t) => {
  const server = await receiver((res) => res.writeHead(204).end());
  const url = server.url;
  server.server.close();
  server.server.closeAllConnections();
  await once(server.server, 'close');
  const refused = await httpSender(new FakeClock())({ url, body: '{}', headers }, new AbortController().signal);
  t.equal(refused.status, null);
  t.match(refused.error, /ECONNREFUSED/);

  const hanging = await receiver(() => undefined);
  const controller = new AbortController();
  const arrived = hanging.arrived();
  const sending = httpSender(new FakeClock())({ url: hanging.url, body: '{}', headers }, controller.signal);
  await arrived;
  controller.abort();
  t.same(await sending, { status: null, error: 'dropped: the daemon stopped' });
});
