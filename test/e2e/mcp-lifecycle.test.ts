// skillctl mcp's life around the daemon's: skills that change, a daemon that is not there or goes
// away and comes back, and the end of the server's input.
import t from 'tap';
import { once } from 'node:events';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { RELEASE_FILE, TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { connectMcp, INITIALIZE, LONG_CALL, rawServer, type RawServer } from '../helpers/mcp.js';

const skillsDir = await mkdtemp(join(tmpdir(), 'skilld-mcp-skills-'));
await cp(join(TEST_SKILLS, 'echo-auto'), join(skillsDir, 'echo-auto'), { recursive: true });
let daemon = await TestDaemon.start({ skillsDirs: [skillsDir], config: { kill_grace_ms: 300 } });
t.teardown(async () => {
  await daemon.cleanup();
  await rm(skillsDir, { recursive: true, force: true });
});

/** Resolves with the tool list of the first `tools/list_changed` after which `wanted` holds. */
function toolsWatch(): { onToolsChanged: (tools: Tool[]) => void; until: (wanted: (tools: Tool[]) => boolean) => Promise<Tool[]> } {
  const waiters = new Set<(tools: Tool[]) => void>();
  return {
    onToolsChanged: (tools) => {
      for (const waiter of waiters) waiter(tools);
    },
    until: (wanted) =>
      new Promise((resolve) => {
        const waiter = (tools: Tool[]): void => {
          if (!wanted(tools)) return;
          waiters.delete(waiter);
          resolve(tools);
        };
        waiters.add(waiter);
      }),
  };
}

const named = (name: string) => (tools: Tool[]) => tools.find((tool) => tool.name === name);

t.test('hot reload: a skill added, edited, removed in the skills folder sends tools/list_changed with the new list', async (t) => {
  const watch = toolsWatch();
  const mcp = await connectMcp(daemon.socket, { onToolsChanged: watch.onToolsChanged });
  t.teardown(() => mcp.close());
  t.same((await mcp.client.listTools()).tools.map((tool) => tool.name), ['echo-auto', 'skilld_reply', 'skilld_job']);
  const dir = join(skillsDir, 'greeter');
  const manifest = (description: string): string => JSON.stringify({ id: 'greeter', version: '1.0.0', execution_modes: ['auto'], description });
  const added = watch.until((tools) => named('greeter')(tools)?.description?.startsWith('Says hello.') === true);
  await cp(join(TEST_SKILLS, 'echo-auto'), dir, { recursive: true });
  await writeFile(join(dir, 'assets', 'runner.json'), manifest('Says hello.'));
  t.ok(named('greeter')(await added), 'the new skill is a tool');
  const edited = watch.until((tools) => named('greeter')(tools)?.description?.startsWith('Says hello twice.') === true);
  await writeFile(join(dir, 'assets', 'runner.json'), manifest('Says hello twice.'));
  await edited;
  const removed = watch.until((tools) => named('greeter')(tools) === undefined);
  await rm(dir, { recursive: true });
  t.same((await removed).map((tool) => tool.name), ['echo-auto', 'skilld_reply', 'skilld_job']);
});

/** A raw server with a call in flight of a job that ends once it is released (`TestDaemon.release`); resolves once the job runs. */
async function heldCall(socket: string): Promise<RawServer & { jobId: string }> {
  const server = rawServer(socket);
  server.send(INITIALIZE);
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo-auto', arguments: { input: { release_file: RELEASE_FILE } }, _meta: { progressToken: 'p' } } });
  for (;;) {
    const next = await server.lines.next();
    if (next.done === true) throw new Error(`the server ended: ${server.stderr()}`);
    const message = JSON.parse(next.value) as { method?: string; params?: { message?: string } };
    const running = message.method === 'notifications/progress' ? /^job (\S+) running$/.exec(message.params?.message ?? '') : null;
    if (running !== null) return { ...server, jobId: running[1] as string };
  }
}

t.test('the end of its input stops the server (exit 0) and leaves the job it was following alone', async (t) => {
  const server = await heldCall(daemon.socket);
  server.child.stdin?.end();
  const [code] = (await once(server.child, 'exit')) as [number | null];
  t.equal(code, 0, server.stderr());
  t.equal(server.stderr(), '', 'nothing to report');
  await daemon.release(server.jobId);
  t.equal((await waitForStatus(await daemon.client(), server.jobId)).status, 'succeeded', 'not canceled: the daemon ran it to its end');
});

t.test('SIGTERM stops the server with exit 0, Ctrl-C (SIGINT) with 130; the job runs on', async (t) => {
  for (const [signal, exit] of [['SIGTERM', 0], ['SIGINT', 130]] as const) {
    const server = await heldCall(daemon.socket);
    server.child.kill(signal);
    const [code] = (await once(server.child, 'exit')) as [number | null];
    t.equal(code, exit, `${signal}: ${server.stderr()}`);
    await daemon.release(server.jobId);
    t.equal((await waitForStatus(await daemon.client(), server.jobId)).status, 'succeeded');
  }
});

t.test('the daemon not running: exit 3 and a clear message on stderr, nothing on stdout; an MCP client fails to connect, no hang', async (t) => {
  const socket = join(daemon.dir, 'nobody-here.sock');
  const server = rawServer(socket);
  server.send(INITIALIZE);
  const [code] = (await once(server.child, 'exit')) as [number | null];
  t.equal(code, 3);
  t.equal((await server.lines.next()).done, true, 'stdout carries nothing');
  t.match(server.stderr(), `skillctl: cannot reach the daemon at ${socket}: `);
  await t.rejects(connectMcp(socket), 'the SDK client gives up when the server exits');
});

t.test('the daemon going away ends a call as isError; the server outlives it and serves the daemon that comes back', async (t) => {
  const watch = toolsWatch();
  const mcp = await connectMcp(daemon.socket, { onToolsChanged: watch.onToolsChanged });
  t.teardown(() => mcp.close());
  let jobId = '';
  let markRunning = (): void => undefined;
  const running = new Promise<void>((resolve) => (markRunning = resolve));
  const onprogress = (p: { message?: string | undefined }): void => {
    jobId = /job (\S+)/.exec(p.message ?? '')?.[1] ?? jobId;
    if (p.message?.endsWith(' running') === true) markRunning();
  };
  const calling = mcp.client.callTool({ name: 'echo-auto', arguments: { input: { scenario: 'hang' } } }, undefined, { ...LONG_CALL, onprogress }) as Promise<CallToolResult>;
  await running;
  await daemon.stop();
  const lost = await calling;
  t.equal(lost.isError, true);
  t.match(lost.content, [{ type: 'text', text: `cannot reach the skilld daemon at ${daemon.socket}` }]);
  await t.rejects(mcp.client.listTools(), /cannot reach the skilld daemon/, 'no daemon, no tool list');
  daemon = await TestDaemon.start({ dir: daemon.dir, socket: daemon.socket, skillsDirs: [skillsDir], config: { kill_grace_ms: 300 } });
  const relisted = watch.until(() => true);
  const again = (await mcp.client.callTool({ name: 'echo-auto', arguments: { input: {} } }, undefined, LONG_CALL)) as CallToolResult;
  t.same(again.structuredContent, { greeting: 'hello' }, 'the next call reaches the new daemon');
  t.ok(await relisted, 'and the client is told to read the tool list again');
  const client = await daemon.client();
  t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } }, 'the daemon kept the truth about the job it lost');
});
