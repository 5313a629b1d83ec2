import t from 'tap';
import { execFile } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { lstat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeLine, MAX_RPC_LINE_BYTES } from '../../rpc/framing.js';
import { rpcError, TestDaemon } from '../helpers/daemon.js';

const daemon = await TestDaemon.start();
t.teardown(() => daemon.cleanup());

/** Sends raw text on a new connection and collects the answer lines until `count` arrive or the socket closes. */
function exchange(text: string | Buffer, count: number): Promise<{ lines: unknown[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(daemon.socket);
    let buffer = '';
    const lines: unknown[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ lines, closed });
    };
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const part of parts) lines.push(JSON.parse(part));
      if (lines.length >= count) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error) => (done ? undefined : reject(error)));
    socket.write(text);
  });
}

async function ping(): Promise<void> {
  const client = await daemon.client();
  const answer = await client.request<{ ok: boolean }>('daemon/ping');
  if (answer.ok !== true) throw new Error('daemon did not answer');
}

t.test('the socket is created with mode 0600', async (t) => {
  const info = await lstat(daemon.socket);
  t.ok(info.isSocket());
  t.equal(info.mode & 0o777, 0o600);
});

t.test('bad JSON gets -32700 PARSE_ERROR and the connection keeps serving', async (t) => {
  const { lines } = await exchange('{not json\n{"jsonrpc":"2.0","id":2,"method":"daemon/ping"}\n', 2);
  t.match(lines[0], { jsonrpc: '2.0', id: null, error: { code: -32700, data: { code: 'PARSE_ERROR' } } });
  t.match(lines[1], { id: 2, result: { ok: true } });
});

t.test('an invalid request gets -32600 INVALID_REQUEST', async (t) => {
  const { lines } = await exchange('{"jsonrpc":"1.0","id":3,"method":"daemon/ping"}\n[]\n42\n', 3);
  for (const line of lines) t.match(line, { error: { code: -32600, data: { code: 'INVALID_REQUEST' } } });
  t.ok(lines.some((l) => (l as { id: unknown }).id === 3), 'the request id is echoed when it can be read');
});

t.test('an unknown method gets -32601 METHOD_NOT_FOUND', async (t) => {
  const { lines } = await exchange('{"jsonrpc":"2.0","id":"x","method":"jobs/explode"}\n', 1);
  t.match(lines[0], { id: 'x', error: { code: -32601, data: { code: 'METHOD_NOT_FOUND' } } });
});

t.test('bad params get -32602 INVALID_PARAMS naming the field', async (t) => {
  const { lines } = await exchange(
    [
      '{"jsonrpc":"2.0","id":1,"method":"jobs/get","params":{}}',
      '{"jsonrpc":"2.0","id":2,"method":"jobs/create","params":{"skill_id":"echo-auto","engine":"codex","bogus":1}}',
      '{"jsonrpc":"2.0","id":3,"method":"jobs/list","params":{"limit":0}}',
      '{"jsonrpc":"2.0","id":4,"method":"jobs/get","params":["positional"]}',
    ].join('\n') + '\n',
    4,
  );
  for (const line of lines) t.match(line, { error: { code: -32602, data: { code: 'INVALID_PARAMS' } } });
  t.match((lines.find((l) => (l as { id: number }).id === 1) as { error: { message: string } }).error.message, /job_id/);
  t.match((lines.find((l) => (l as { id: number }).id === 2) as { error: { message: string } }).error.message, /bogus/);
});

t.test('a batch is answered with an array; notifications get no answer', async (t) => {
  const batch = [
    { jsonrpc: '2.0', id: 1, method: 'daemon/ping' },
    { jsonrpc: '2.0', method: 'daemon/ping' },
    { jsonrpc: '2.0', id: 2, method: 'nope' },
    { jsonrpc: '2.0', id: 3, method: 'jobs/get', params: { job_id: 'job-missing' } },
  ];
  const { lines } = await exchange(`${JSON.stringify(batch)}\n`, 1);
  const answer = lines[0] as Array<{ id: number }>;
  t.ok(Array.isArray(answer));
  t.equal(answer.length, 3);
  t.match(answer, [{ id: 1, result: { ok: true } }, { id: 2, error: { code: -32601 } }, { id: 3, error: { data: { code: 'JOB_NOT_FOUND' } } }]);
});

t.test('a line over 1 MiB gets REQUEST_TOO_LARGE and that connection is closed; others keep working', async (t) => {
  const other = await daemon.client();
  const socket = createConnection(daemon.socket);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.write(Buffer.alloc(1024 * 1024 + 10, 'a'));
  // Whatever follows is dropped: this ping on the same connection is never answered.
  socket.write('\n{"jsonrpc":"2.0","id":5,"method":"daemon/ping"}\n');
  await once(socket, 'end');
  const lines = text.trim().split('\n').map((line) => JSON.parse(line) as unknown);
  t.equal(lines.length, 1, 'one answer, then the daemon ended the connection');
  t.match(lines[0], { id: null, error: { code: -32600, data: { code: 'REQUEST_TOO_LARGE' } } });
  socket.destroy();
  t.same(await other.request('daemon/ping'), { ok: true, version: '0.1.0', protocol: 1 }, 'another connection is unaffected');
});

t.test('the RPC client refuses a request line over 1 MiB with REQUEST_TOO_LARGE before sending it; its connection serves on, and a line of exactly 1 MiB is sent', async (t) => {
  const client = await daemon.client();
  // The client numbers its requests from 1: the first two lines carry ids of the same length.
  const bare = Buffer.byteLength(encodeLine({ jsonrpc: '2.0', id: 1, method: 'daemon/ping', params: { pad: '' } })) - 1;
  const pad = 'x'.repeat(MAX_RPC_LINE_BYTES - bare);
  t.equal((await rpcError(client.request('daemon/ping', { pad }))).dataCode, 'INVALID_PARAMS', 'exactly 1 MiB: the daemon reads it and answers (ping takes no params)');
  const refused = await rpcError(client.request('daemon/ping', { pad: `${pad}x` }));
  t.match(refused, { rpcCode: -32600, dataCode: 'REQUEST_TOO_LARGE' });
  t.equal(refused.message, `daemon/ping would send ${MAX_RPC_LINE_BYTES + 1} bytes, over the 1 MiB (1048576 bytes) the daemon reads in one request; nothing was sent`);
  t.same(await client.request('daemon/ping'), { ok: true, version: '0.1.0', protocol: 1 }, 'the same connection still serves');
});

t.test('garbage bytes, binary and half lines never take the daemon down', async (t) => {
  await exchange(Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x7b, 0x0a]), 2);
  const socket = createConnection(daemon.socket);
  socket.write('{"jsonrpc":"2.0","id":1,"meth');
  socket.destroy();
  await ping();
  t.pass('daemon still answers');
});

t.test('daemon/status reports slots, jobs by status and skills', async (t) => {
  const client = await daemon.client();
  const status = await client.request<Record<string, unknown>>('daemon/status');
  t.match(status, { version: '0.1.0', pid: Number, socket: daemon.socket, state_dir: daemon.stateDir, slots: { max: 4, used: 0, queued: 0 }, jobs: { queued: 0, running: 0, waiting_user: 0, succeeded: 0, failed: 0, canceled: 0 }, skills: { ok: 5, invalid: 0 } });
});

t.test('half-close: every request already sent is answered before the connection closes', async (t) => {
  const socket = createConnection(daemon.socket);
  await once(socket, 'connect');
  const requests = Array.from({ length: 40 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: i % 2 === 0 ? 'daemon/ping' : 'skills/list' }));
  socket.end(`${requests.join('\n')}\n`);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  await once(socket, 'close');
  const ids = text.trim().split('\n').map((line) => (JSON.parse(line) as { id: number }).id);
  t.same(ids.sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i + 1), 'all 40 answered, then closed');
});

t.test('a stale socket file is replaced, a live one is refused, a non-socket is kept', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-sock-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // A socket file left behind by a dead process: bound, then the listener closed without unlinking.
  const stalePath = join(dir, 'skilld.sock');
  const stale = createServer();
  await new Promise<void>((r) => stale.listen(stalePath, r));
  // Closing unlinks the path; keep a file at that path by re-binding from a process that is then killed.
  stale.close();
  const child = await new Promise<import('node:child_process').ChildProcess>((resolve) => {
    const c = execFile(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stalePath)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    c.on('exit', () => resolve(c));
  });
  t.ok(child.killed || child.signalCode === 'SIGKILL', 'the holder died without cleaning up');
  t.ok((await lstat(stalePath)).isSocket(), 'a stale socket file is there');
  const replaced = await TestDaemon.start({ dir });
  t.pass('a daemon started over the stale socket');
  // A folder of its own, so that only the socket is shared (not the store, which refuses a second daemon first).
  const other = await mkdtemp(join(tmpdir(), 'skilld-second-'));
  t.teardown(() => rm(other, { recursive: true, force: true }));
  const refused = await TestDaemon.start({ dir: other, socket: replaced.socket }).then(
    () => 'started',
    (error: Error) => error.message,
  );
  t.match(refused, /already listening/, 'a second daemon on a live socket refuses to start');
  await replaced.stop();

  const plainDir = await mkdtemp(join(tmpdir(), 'skilld-sock-'));
  t.teardown(() => rm(plainDir, { recursive: true, force: true }));
  await writeFile(join(plainDir, 'skilld.sock'), 'not a socket');
  const notSocket = await TestDaemon.start({ dir: plainDir }).then(
    () => 'started',
    (error: Error) => error.message,
  );
  t.match(notSocket, /not a socket/, 'a regular file at the socket path is never replaced');
});
