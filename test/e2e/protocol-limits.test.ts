// Hostile input on the socket: answers, batches, nesting and connections are bounded, and no
// request can take the daemon down.
import t from 'tap';
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FILES_ONLY, rpcError, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';

const daemon = await TestDaemon.start({ config: { max_connections: 48 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

/** Connects, sends `text`, and collects answer lines until `count` arrived or the socket closed. */
async function exchange(text: string, count = 1): Promise<{ lines: string[]; closed: boolean }> {
  const socket = createConnection(daemon.socket);
  const lines: string[] = [];
  let buffer = '';
  let closed = false;
  const done = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts);
      if (lines.length >= count) resolve();
    });
    socket.on('close', () => {
      closed = true;
      resolve();
    });
  });
  socket.write(text);
  await done;
  socket.destroy();
  return { lines, closed };
}

async function stillServing(): Promise<void> {
  const fresh = await daemon.client();
  t.match(await fresh.request('daemon/ping'), { ok: true }, 'the daemon still answers');
}

t.test('one request kills the daemon: a batch of 2,500 jobs/logs on a job with a 3 MiB log line is refused whole, and 1,000 get a bounded answer', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'big_line' } });
  await waitForStatus(client, job.job_id);
  const logs = (id: number): object => ({ jsonrpc: '2.0', id, method: 'jobs/logs', params: { job_id: job.job_id } });
  const single = await client.request<{ data: string }>('jobs/logs', { job_id: job.job_id });
  t.equal(single.data.length, 256 * 1024, 'one call reads one 256 KiB chunk of the long line');

  const refused = await exchange(`${JSON.stringify(Array.from({ length: 2500 }, (_, i) => logs(i)))}\n`);
  t.match(JSON.parse(refused.lines[0] ?? 'null'), { id: null, error: { code: -32600, data: { code: 'BATCH_TOO_LARGE' } } });

  const bounded = await exchange(`${JSON.stringify(Array.from({ length: 1000 }, (_, i) => logs(i)))}\n`);
  const line = bounded.lines[0] ?? '';
  t.ok(Buffer.byteLength(line) <= 8 * 1024 * 1024 + 256 * 1024, `the answer line stays bounded (${Buffer.byteLength(line)} bytes)`);
  const answers = JSON.parse(line) as Array<{ id: number; result?: { data: string }; error?: { data: { code: string } } }>;
  t.equal(answers.length, 1000, 'every request is answered');
  const tooLarge = answers.filter((a) => a.error?.data.code === 'RESPONSE_TOO_LARGE').length;
  const full = answers.filter((a) => a.result?.data.length === 256 * 1024).length;
  t.equal(tooLarge + full, 1000, 'each one is a whole chunk or RESPONSE_TOO_LARGE');
  t.ok(full > 0 && tooLarge > 0, `${full} chunks fit, ${tooLarge} did not`);
  await stillServing();
});

t.test('deeply nested input or response (100,000 levels) gets INVALID_PARAMS naming the depth limit, never INTERNAL_ERROR', async (t) => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const create = await exchange(`{"jsonrpc":"2.0","id":1,"method":"jobs/create","params":{"skill_id":"echo-auto","engine":"codex","input":{"v":${deep}}}}\n`);
  t.match(JSON.parse(create.lines[0] ?? 'null'), { id: 1, error: { code: -32602, message: /nested more than 64 levels/, data: { code: 'INVALID_PARAMS' } } });

  const waiting = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(client, waiting.job_id, ['waiting_user']);
  const reply = await exchange(`{"jsonrpc":"2.0","id":2,"method":"jobs/reply","params":{"job_id":"${waiting.job_id}","interaction_id":1,"response":${deep}}}\n`);
  t.match(JSON.parse(reply.lines[0] ?? 'null'), { id: 2, error: { code: -32602, data: { code: 'INVALID_PARAMS' } } });
  t.match(await client.request('jobs/get', { job_id: waiting.job_id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'the job still waits for a reply');
  t.equal(((await client.request<{ jobs: JobView[] }>('jobs/list', { skill_id: 'echo-auto', limit: 1000 })).jobs.length), 1, 'the nested create stored nothing');
  await client.request('jobs/cancel', { job_id: waiting.job_id });
});

t.test('a session_timeout_sec or hard_timeout_sec past a year (31,536,000 s) gets INVALID_PARAMS naming the field and its maximum; nothing is stored', async (t) => {
  const jobCount = async (): Promise<number> => (await client.request<{ jobs: JobView[] }>('jobs/list', { limit: 1000 })).jobs.length;
  const before = await jobCount();
  for (const field of ['session_timeout_sec', 'hard_timeout_sec']) {
    for (const value of [Number.MAX_SAFE_INTEGER, 31_536_001]) {
      const error = await rpcError(client.request('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', interactive_require_user_reply: false, [field]: value }));
      t.match(error, { dataCode: 'INVALID_PARAMS', message: new RegExp(`${field} must be <= 31536000`), details: { path: `/${field}` } }, `${field} ${value}`);
    }
  }
  t.equal(await jobCount(), before, 'no job was created');
});

t.test('a non-strict wait of the longest session_timeout_sec (a year) gets its deadline a year after the question, and keeps waiting', async (t) => {
  const year = 31_536_000;
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', interactive_require_user_reply: false, session_timeout_sec: year, hard_timeout_sec: year, input: { scenario: 'ask' } });
  const waiting = (await waitForStatus(client, job.job_id, ['waiting_user', 'succeeded', 'failed', 'canceled'])) as JobView & { wait_deadline_at: string | null };
  t.equal(waiting.status, 'waiting_user', `it waits (${JSON.stringify(waiting.error)})`);
  const { interactions } = await client.request<{ interactions: Array<{ asked_at: string }> }>('jobs/history', { job_id: job.job_id });
  t.equal(Date.parse(waiting.wait_deadline_at ?? '') - Date.parse(interactions[0]?.asked_at ?? ''), year * 1000);
  await client.request('jobs/cancel', { job_id: job.job_id });
});

t.test('jobs/history of more than an answer holds (8 MiB) comes in pages: each within bounds, together every round once; skillctl history reads them all', { skip: FILES_ONLY }, async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'Lisbon' });
  await waitForStatus(client, job.job_id);
  // Ten rounds of a megabyte each, as a long session would leave: the latest version of the history is its last line.
  const round = (id: number) => ({ interaction_id: id, prompt: `${id}:${'p'.repeat(1_000_000)}`, kind: 'open_text', response: 'r', resolution_mode: 'user_reply', asked_at: '2026-01-01T00:00:00.000Z', replied_at: '2026-01-01T00:00:01.000Z', idempotency_key: null });
  await appendFile(join(daemon.runDir(job.job_id), 'history.ndjson'), `${JSON.stringify(Array.from({ length: 10 }, (_, i) => round(i + 1)))}\n`);
  const seen: number[] = [];
  let after: number | null = 0;
  let pages = 0;
  while (after !== null) {
    const page: { interactions: Array<{ interaction_id: number }>; next: number | null } = await client.request('jobs/history', { job_id: job.job_id, after });
    t.ok(page.interactions.length > 0 && page.interactions.length < 10, `page ${(pages += 1)}: ${page.interactions.length} rounds`);
    seen.push(...page.interactions.map((r) => r.interaction_id));
    after = page.next;
  }
  t.same(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'every round once, in order');
  t.same((await client.request<{ interactions: unknown[]; next: null }>('jobs/history', { job_id: job.job_id, after: 10 })), { job_id: job.job_id, interactions: [], next: null });
  const out = await runSkillctl(['history', job.job_id, '--json'], { ...process.env, SKILLD_SOCKET: daemon.socket });
  t.equal(out.code, 0, out.stderr);
  t.same((JSON.parse(out.stdout) as { interactions: Array<{ interaction_id: number }> }).interactions.map((r) => r.interaction_id), seen);
});

t.test('300 connections each holding ~1 MB of an unfinished line: connections and buffered bytes are capped with SERVER_BUSY', async (t) => {
  const sockets: Socket[] = [];
  const refusals: string[] = [];
  const chunk = 'x'.repeat(1_000_000);
  // 47 places are left (max_connections 48, one taken by `client`), and 32 MiB hold at most 33 such lines.
  const mostKept = 33;
  let enoughClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (enoughClosed = resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
  });
  for (let i = 0; i < 300; i += 1) {
    const socket = createConnection(daemon.socket);
    sockets.push(socket);
    let text = '';
    socket.on('data', (data: Buffer) => (text += data.toString()));
    socket.on('close', () => {
      refusals.push(text);
      if (refusals.length === 300 - mostKept) enoughClosed();
    });
    socket.on('error', () => undefined);
    socket.write(chunk);
  }
  await closed;
  // A client still writing its megabyte may have its write fail (the daemon stops reading after
  // 64 KiB) before it reads the answer: it sees the connection end. None sees anything else.
  const codes = refusals.map((text) => (text === '' ? 'cut' : (JSON.parse(text.split('\n')[0] ?? 'null') as { error?: { data: { code: string } } } | null)?.error?.data.code));
  t.ok(codes.every((code) => code === 'SERVER_BUSY' || code === 'cut'), 'each refused connection was told SERVER_BUSY, or cut');
  const status = await (await daemon.client()).request<{ internal_errors: { count: number } }>('daemon/status');
  t.equal(status.internal_errors.count, 0, 'nothing escaped into the last line of defence');
  for (const socket of sockets) socket.destroy();
  await stillServing();
});

t.test('max_connections: one client more than the limit closes the connection with nothing in progress (SERVER_BUSY); with every one following jobs it is refused; a place freed is taken again', async (t) => {
  const limited = await TestDaemon.start({ config: { max_connections: 2 } });
  t.teardown(() => limited.cleanup());
  /** A raw connection's first line from the daemon, once it has closed the connection. */
  const lastWord = (socket: Socket): Promise<unknown> => {
    let text = '';
    socket.on('data', (data: Buffer) => (text += data.toString()));
    return once(socket, 'close').then(() => JSON.parse(text.split('\n')[0] ?? 'null') as unknown);
  };
  const idle = createConnection(limited.socket);
  const idleEnd = lastWord(idle);
  await once(idle, 'connect');
  const follower = await limited.client();
  await follower.request('jobs/subscribe', {});
  const third = await limited.client();
  t.match(await third.request('daemon/ping'), { ok: true }, 'the new client is served');
  t.match(await idleEnd, { id: null, error: { code: 3003, data: { code: 'SERVER_BUSY' }, message: /closed to make room/ } }, 'the idle one made room');
  await third.request('jobs/subscribe', {});
  const refused = lastWord(createConnection(limited.socket));
  t.match(await refused, { id: null, error: { code: 3003, data: { code: 'SERVER_BUSY' }, message: /each with a request or a subscription in progress/ } }, 'every place busy: refused');
  t.match(await follower.request('daemon/ping'), { ok: true });
  third.close();
  await follower.request('daemon/ping');
  const fourth = await limited.client();
  t.match(await fourth.request('daemon/ping'), { ok: true }, 'the freed place is taken');
});
