// skillctl mcp past its limits: a call whose request the daemon would not read, and messages too
// large for the server to read. Each is refused on its own; the server and its other calls go on.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RELEASE_FILE, TestDaemon } from '../helpers/daemon.js';
import { connectMcp, INITIALIZE, LONG_CALL, rawServer, type RawServer } from '../helpers/mcp.js';

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const rpc = await daemon.client();
const MIB = 1024 * 1024;

function text(result: CallToolResult): string {
  return result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

/** The next line the server writes that `wanted` picks, as JSON; the lines before it are skipped. */
async function lineWhere(server: RawServer, wanted: (message: Message) => boolean): Promise<Message> {
  for (;;) {
    const next = await server.lines.next();
    if (next.done === true) throw new Error(`the server ended: ${server.stderr()}`);
    const message = JSON.parse(next.value) as Message;
    if (wanted(message)) return message;
  }
}

/** The answer to request `id`. */
const answerTo = (server: RawServer, id: unknown): Promise<Message> => lineWhere(server, (m) => m.id === id && m.method === undefined);

/** A raw server past the MCP handshake; its input is ended, and its exit awaited, when the test ends. */
async function initialized(t: Test, capabilities: Record<string, unknown> = {}): Promise<RawServer> {
  const server = rawServer(daemon.socket);
  t.teardown(async () => {
    server.child.stdin?.end();
    if (server.child.exitCode === null) await once(server.child, 'exit');
  });
  server.send({ ...INITIALIZE, params: { ...INITIALIZE.params, capabilities } });
  await answerTo(server, INITIALIZE.id);
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return server;
}

t.test('a call whose request would exceed the 1 MiB the daemon reads in one line is refused alone with REQUEST_TOO_LARGE; a call in flight goes on to its output', async (t) => {
  const mcp = await connectMcp(daemon.socket);
  t.teardown(() => mcp.close());
  let markRunning = (_jobId: string): void => undefined;
  const running = new Promise<string>((resolve) => (markRunning = resolve));
  const onprogress = (p: { message?: string | undefined }): void => {
    const job = /^job (\S+) running$/.exec(p.message ?? '');
    if (job !== null) markRunning(job[1] as string);
  };
  const held = mcp.client.callTool({ name: 'echo-auto', arguments: { input: { release_file: RELEASE_FILE } } }, undefined, { ...LONG_CALL, onprogress }) as Promise<CallToolResult>;
  const heldJob = await running;
  const jobsBefore = (await rpc.request<{ jobs: unknown }>('daemon/status')).jobs;
  const large = (await mcp.client.callTool({ name: 'echo-auto', arguments: { input: { scenario: 'x'.repeat(2 * MIB) } } }, undefined, LONG_CALL)) as CallToolResult;
  t.equal(large.isError, true);
  t.match(text(large), /^REQUEST_TOO_LARGE: jobs\/create would send \d+ bytes, over the 1 MiB \(1048576 bytes\) the daemon reads in one request; nothing was sent/);
  t.same((await rpc.request<{ jobs: unknown }>('daemon/status')).jobs, jobsBefore, 'no job was made of it');
  await daemon.release(heldJob);
  const done = await held;
  t.notOk(done.isError, text(done));
  t.same(done.structuredContent, { greeting: 'hello' }, 'the call in flight got its output');
});

t.test('a message over 10 MiB gets REQUEST_TOO_LARGE with the id read from either end of its line, or with none; the server reads on', async (t) => {
  const server = await initialized(t);
  const filler = 'x'.repeat(10 * MIB);
  const refused = { jsonrpc: '2.0', error: { code: -32600, message: /over the 10 MiB \(10485760 bytes\) skillctl mcp reads in one message/, data: { code: 'REQUEST_TOO_LARGE' } } };
  // The MCP TypeScript SDK writes a request's id last; the Python and Rust SDKs write it first.
  server.write(`{"method":"tools/call","params":{"name":"echo-auto","arguments":{"input":{"scenario":"${filler}"}}},"jsonrpc":"2.0","id":2}\n`);
  t.match(await answerTo(server, 2), refused, 'the id at the end');
  server.write(`{"jsonrpc":"2.0","id":"third","method":"tools/call","params":{"name":"echo-auto","arguments":{"input":{"scenario":"${filler}"}}}}\n`);
  t.match(await answerTo(server, 'third'), refused, 'the id at the start');
  server.write(`${filler}x\n`);
  const anonymous = await lineWhere(server, (m) => m.error !== undefined);
  t.match(anonymous, refused);
  t.notOk('id' in anonymous, 'no id to be read: the answer has none');
  server.send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
  const listed = await answerTo(server, 4);
  t.ok(Array.isArray(listed.result?.['tools']), 'the next message is read and answered');
  // stderr is another pipe: what was written there before the answers may be read after them.
  while (!server.stderr().includes('skillctl mcp: a message of ')) await once(server.child.stderr!, 'data');
  t.pass('each refusal is also written on stderr');
});

t.test('an answer to a question over 10 MiB fails the question at once: the call returns the waiting answer saying why', async (t) => {
  const server = await initialized(t, { elicitation: { form: {} } });
  server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'interactive-only', arguments: { input: { scenario: 'ask' } } } });
  const question = await lineWhere(server, (m) => m.method === 'elicitation/create');
  server.write(`{"result":{"action":"accept","content":{"answer":"${'x'.repeat(10 * MIB)}"}},"jsonrpc":"2.0","id":${JSON.stringify(question.id)}}\n`);
  const waiting = await answerTo(server, 2);
  t.match(waiting.result, { structuredContent: { status: 'waiting_user' } });
  t.match(JSON.stringify(waiting.result?.['content']), /the question could not be put: .*over the 10 MiB/);
  await rpc.request('jobs/cancel', { job_id: (waiting.result?.['structuredContent'] as { job_id: string }).job_id });
});
