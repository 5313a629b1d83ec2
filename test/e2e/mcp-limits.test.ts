// skillctl mcp past its limits: a call whose request the daemon would not read is refused on its
// own; the server and its other calls go on.
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TestDaemon } from '../helpers/daemon.js';
import { connectMcp, LONG_CALL } from '../helpers/mcp.js';

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const rpc = await daemon.client();
const MIB = 1024 * 1024;

function text(result: CallToolResult): string {
  return result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

t.test('a call whose request would exceed the 1 MiB the daemon reads in one line is refused alone with REQUEST_TOO_LARGE; a call in flight goes on to its output', async (t) => {
  const mcp = await connectMcp(daemon.socket);
  t.teardown(() => mcp.close());
  const release = join(daemon.dir, 'release-large-call');
  let markRunning = (): void => undefined;
  const running = new Promise<void>((resolve) => (markRunning = resolve));
  const onprogress = (p: { message?: string | undefined }): void => {
    if (p.message?.endsWith(' running') === true) markRunning();
  };
  const held = mcp.client.callTool({ name: 'echo-auto', arguments: { input: { release_file: release } } }, undefined, { ...LONG_CALL, onprogress }) as Promise<CallToolResult>;
  await running;
  const jobsBefore = (await rpc.request<{ jobs: unknown }>('daemon/status')).jobs;
  const large = (await mcp.client.callTool({ name: 'echo-auto', arguments: { input: { scenario: 'x'.repeat(2 * MIB) } } }, undefined, LONG_CALL)) as CallToolResult;
  t.equal(large.isError, true);
  t.match(text(large), /^REQUEST_TOO_LARGE: jobs\/create would send \d+ bytes, over the 1 MiB \(1048576 bytes\) the daemon reads in one request; nothing was sent/);
  t.same((await rpc.request<{ jobs: unknown }>('daemon/status')).jobs, jobsBefore, 'no job was made of it');
  await writeFile(release, '');
  const done = await held;
  t.notOk(done.isError, text(done));
  t.same(done.structuredContent, { greeting: 'hello' }, 'the call in flight got its output');
});
