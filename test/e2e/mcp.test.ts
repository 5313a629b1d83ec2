// skillctl mcp against a real daemon with the fake engines, driven by the MCP SDK's own client
// over stdio, as an agent CLI drives it.
import t, { type Test } from 'tap';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURES, TestDaemon, TEST_SKILLS, waitForStatus, type JobView } from '../helpers/daemon.js';
import { connectMcp, LONG_CALL, type McpSession } from '../helpers/mcp.js';

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const rpc = await daemon.client();

/** A session closed when the test ends. */
async function session(t: Test, options: Parameters<typeof connectMcp>[1] = {}): Promise<McpSession> {
  const mcp = await connectMcp(daemon.socket, options);
  t.teardown(() => mcp.close());
  return mcp;
}

function call(mcp: McpSession, name: string, args: Record<string, unknown>, options: Parameters<McpSession['client']['callTool']>[2] = {}): Promise<CallToolResult> {
  return mcp.client.callTool({ name, arguments: args }, undefined, { ...LONG_CALL, ...options }) as Promise<CallToolResult>;
}

function text(result: CallToolResult): string {
  return result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

async function skillFile(id: string, rel: string): Promise<unknown> {
  const raw = await readFile(join(TEST_SKILLS, id, rel), 'utf8');
  return rel.endsWith('.json') ? (JSON.parse(raw) as unknown) : raw;
}

t.test('tools/list: one tool per valid skill with its schemas and description, and the two job tools', async (t) => {
  const mcp = await session(t);
  const { tools } = await mcp.client.listTools();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  t.same([...byName.keys()].sort(), ['codex-only', 'echo-auto', 'echo-both', 'interactive-only', 'no-gemini', 'skilld_job', 'skilld_reply']);
  const auto = byName.get('echo-auto') as Tool;
  t.match(auto.inputSchema, {
    type: 'object',
    required: ['input'],
    properties: {
      input: await skillFile('echo-auto', 'assets/input.schema.json'),
      engine: { type: 'string', enum: ['codex', 'gemini', 'iflow', 'claude'], default: 'codex' },
      execution_mode: { enum: ['auto'], default: 'auto' },
    },
  });
  t.notOk('parameter' in (auto.inputSchema.properties ?? {}), 'no parameter schema, no parameter argument');
  t.same(auto.outputSchema, await skillFile('echo-auto', 'assets/output.schema.json'), "an auto-only skill's output schema");
  t.match(auto.description, 'Test skill: the fake engines follow the scenario input.');
  t.match(auto.description, (await skillFile('echo-auto', 'SKILL.md')) as string, 'SKILL.md is part of the description');
  const both = byName.get('echo-both') as Tool;
  t.equal(both.outputSchema, undefined, 'a skill that may run interactive declares none: a call may end in the waiting answer');
  t.match(both.inputSchema.properties, { execution_mode: { enum: ['auto', 'interactive'], default: 'auto' } });
  t.match(byName.get('no-gemini')?.inputSchema.properties, { engine: { enum: ['codex', 'iflow', 'claude'] } });
  t.match(byName.get('interactive-only')?.inputSchema.properties, { execution_mode: { enum: ['interactive'], default: 'interactive' } });
});

t.test('tools/call, auto: the output as structuredContent and JSON text; progress carries the status changes', async (t) => {
  const mcp = await session(t);
  const progress: Array<{ progress: number; message?: string | undefined }> = [];
  const result = await call(mcp, 'echo-auto', { input: { emit: { greeting: 'hi from mcp' } } }, { onprogress: (p) => void progress.push(p) });
  t.notOk(result.isError, text(result));
  t.same(result.structuredContent, { greeting: 'hi from mcp' });
  t.same(JSON.parse(text(result)), { greeting: 'hi from mcp' });
  const jobId = /job (job-\S+) queued/.exec(progress[0]?.message ?? '')?.[1] as string;
  t.same(progress.map((p) => p.message), [`job ${jobId} queued`, `job ${jobId} running`, `job ${jobId} succeeded`]);
  t.same(progress.map((p) => p.progress), [1, 2, 3], 'progress increases');
  t.match(await rpc.request('jobs/get', { job_id: jobId }), { engine: 'codex', execution_mode: 'auto', status: 'succeeded' }, 'the default engine is the first of the skill');
});

t.test("tools/call: a failed job is isError with its stable code; the daemon's refusals too; Gemini's extra argument is dropped", async (t) => {
  const mcp = await session(t);
  const failed = await call(mcp, 'echo-auto', { input: { scenario: 'exit1' }, engine: 'gemini', wait_for_previous: false });
  t.equal(failed.isError, true);
  t.match(text(failed), /^ENGINE_EXIT_NONZERO: .*\njob job-\S+ failed; /);
  t.equal(failed.structuredContent, undefined);
  const invalid = await call(mcp, 'echo-auto', { input: { scenario: 3 } });
  t.equal(invalid.isError, true);
  t.match(text(invalid), 'INPUT_INVALID: input /scenario must be string');
  t.match(text(invalid), 'details: {"input":[{"path":"/scenario","message":"must be string"}]');
  t.match(text(await call(mcp, 'no-gemini', { input: {}, engine: 'gemini' })), 'SKILL_ENGINE_UNSUPPORTED');
  t.match(text(await call(mcp, 'echo-auto', { input: {}, model_name: 'x' })), 'INVALID_PARAMS: unknown argument "model_name"');
  await t.rejects(call(mcp, 'no-such-skill', { input: {} }), /unknown tool "no-such-skill"/, 'an unknown tool is a protocol error');
});

t.test('interactive with elicitation: the question is a form, a reply starting with dashes arrives verbatim', async (t) => {
  const asked: unknown[] = [];
  const mcp = await session(t, {
    elicit: (params) => {
      asked.push(params);
      return { action: 'accept', content: { answer: '--help me' } };
    },
  });
  const progress: string[] = [];
  const result = await call(mcp, 'echo-both', { input: { scenario: 'ask_plain' }, execution_mode: 'interactive' }, { onprogress: (p) => void progress.push(p.message ?? '') });
  t.notOk(result.isError, text(result));
  t.same(result.structuredContent, { greeting: 'hello', reply: '--help me' });
  t.match(asked, [{ message: 'Which city should I use?', requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } }]);
  const jobId = /job (job-\S+)/.exec(progress[0] ?? '')?.[1] as string;
  t.ok(progress.includes(`job ${jobId} waiting_user`));
  const history = await rpc.request<{ interactions: Array<{ response: unknown; resolution_mode: string }> }>('jobs/history', { job_id: jobId });
  t.match(history.interactions, [{ response: '--help me', resolution_mode: 'user_reply' }], 'the reply as the person typed it');
});

t.test('interactive with elicitation: options are a single choice of their labels, answered with the value; it repeats until the job ends', async (t) => {
  const asked: Array<{ requestedSchema: unknown }> = [];
  const mcp = await session(t, {
    elicit: (params) => {
      asked.push(params);
      return { action: 'accept', content: 'choice' in params.requestedSchema.properties ? { choice: 'Rome' } : { answer: `answer ${asked.length}` } };
    },
  });
  const chosen = await call(mcp, 'interactive-only', { input: { scenario: 'ask' } });
  t.same(chosen.structuredContent, { greeting: 'hello', reply: 'rome' }, "the option's value, not its label");
  t.match(asked[0]?.requestedSchema, { properties: { choice: { type: 'string', enum: ['Paris', 'Rome'] } }, required: ['choice'] });
  const twice = await call(mcp, 'interactive-only', { input: { scenario: 'ask_twice' } });
  t.same(twice.structuredContent, { greeting: 'hello', reply: 'answer 3' }, 'two questions, two forms');
  t.equal(asked.length, 3);
});

t.test('a question answered elsewhere (skillctl reply) is withdrawn from the form; the call follows the job to its end', async (t) => {
  let withdrawn = false;
  let asked = (): void => undefined;
  const shown = new Promise<void>((resolve) => (asked = resolve));
  const mcp = await session(t, {
    elicit: (_params, signal) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          withdrawn = true;
          resolve({ action: 'cancel' });
        });
        asked();
      }),
  });
  const progress: string[] = [];
  const calling = call(mcp, 'echo-both', { input: { scenario: 'ask_plain' }, execution_mode: 'interactive' }, { onprogress: (p) => void progress.push(p.message ?? '') });
  await shown;
  const jobId = /job (job-\S+)/.exec(progress[0] ?? '')?.[1] as string;
  await rpc.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: 'from a shell' });
  const result = await calling;
  t.same(result.structuredContent, { greeting: 'hello', reply: 'from a shell' });
  t.ok(withdrawn, 'the form was withdrawn (notifications/cancelled)');
});

t.test('a declined question leaves the job waiting; the answer says how to reply later', async (t) => {
  const mcp = await session(t, { elicit: () => ({ action: 'decline' }) });
  const result = await call(mcp, 'echo-both', { input: { scenario: 'ask' }, execution_mode: 'interactive' });
  t.notOk(result.isError);
  const answer = result.structuredContent as { job_id: string; status: string; pending: unknown };
  t.match(answer, { status: 'waiting_user', pending: { interaction_id: 1, prompt: 'Which city should I use?', kind: 'choose_one' } });
  t.match(text(result), 'the user chose to decline the question');
  t.match(text(result), `skillctl reply ${answer.job_id}`);
  t.match(text(result), 'skilld_reply');
  t.equal((await rpc.request<JobView>('jobs/get', { job_id: answer.job_id })).status, 'waiting_user');
  await rpc.request('jobs/cancel', { job_id: answer.job_id });
});

t.test('interactive without elicitation: the call returns the waiting answer; skilld_reply answers and follows to the output; skilld_job shows the job', async (t) => {
  const mcp = await session(t);
  const first = await call(mcp, 'interactive-only', { input: { scenario: 'ask' }, engine: 'gemini' });
  const waiting = first.structuredContent as { job_id: string };
  t.match(waiting, { job_id: /^job-/, status: 'waiting_user', pending: { interaction_id: 1, options: [{ label: 'Paris', value: 'paris' }, { label: 'Rome', value: 'rome' }] } });
  t.match(text(first), 'this client cannot put questions to its user');
  const shown = await call(mcp, 'skilld_job', { job_id: waiting.job_id });
  t.match(shown.structuredContent, { job_id: waiting.job_id, skill_id: 'interactive-only', status: 'waiting_user', pending: { interaction_id: 1 }, output: null });
  const stale = await call(mcp, 'skilld_reply', { job_id: waiting.job_id, response: 'x', interaction_id: 7 });
  t.equal(stale.isError, true);
  t.match(text(stale), 'INTERACTION_STALE');
  const replied = await call(mcp, 'skilld_reply', { job_id: waiting.job_id, response: '-- Rome, please' });
  t.notOk(replied.isError, text(replied));
  t.same(replied.structuredContent, { greeting: 'hello', reply: '-- Rome, please' });
  const done = await call(mcp, 'skilld_job', { job_id: waiting.job_id });
  t.match(done.structuredContent, { status: 'succeeded', pending: null, output: { greeting: 'hello', reply: '-- Rome, please' }, error: null, result: `skilld://jobs/${waiting.job_id}/result` });
  const again = await call(mcp, 'skilld_reply', { job_id: waiting.job_id, response: 'more' });
  t.match(text(again), `JOB_NOT_WAITING: job ${waiting.job_id} is not waiting (succeeded)`);
  t.match(text(await call(mcp, 'skilld_job', { job_id: 'job-nope' })), 'JOB_NOT_FOUND');
});

t.test('cancelling the MCP request cancels the job', async (t) => {
  const mcp = await session(t);
  const abort = new AbortController();
  let jobId = '';
  const running = new Promise<void>((resolve) => {
    void call(mcp, 'echo-auto', { input: { scenario: 'hang' } }, {
      signal: abort.signal,
      onprogress: (p) => {
        jobId = /job (job-\S+)/.exec(p.message ?? '')?.[1] ?? jobId;
        if (p.message?.endsWith(' running') === true) resolve();
      },
    }).catch(() => undefined);
  });
  await running;
  abort.abort('stop it');
  const job = await waitForStatus(rpc, jobId);
  t.match(job, { status: 'canceled', error: { code: 'CANCELED_BY_USER' } });
});

t.test('resources: a job\'s result and its artifacts by URI; results of the newest jobs are listed', async (t) => {
  const mcp = await session(t);
  const done = await call(mcp, 'echo-auto', { input: { emit: { greeting: 'with files' } } });
  const link = done.content.find((block) => block.type === 'resource_link');
  const jobId = /^skilld:\/\/jobs\/(job-[^/]+)\/result$/.exec(link?.type === 'resource_link' ? link.uri : '')?.[1] as string;
  t.ok(jobId, 'a successful call links its result');
  const artifacts = join(daemon.runDir(jobId), 'workspace', 'artifacts');
  await mkdir(join(artifacts, 'sub dir'), { recursive: true });
  await writeFile(join(artifacts, 'notes.md'), '# Notes\n');
  await writeFile(join(artifacts, 'sub dir', 'raw.bin'), Buffer.from([0xff, 0x00, 0xfe]));
  const result = await mcp.client.readResource({ uri: `skilld://jobs/${jobId}/result` });
  const view = JSON.parse((result.contents[0] as { text: string }).text) as { output: unknown; artifacts: string[] };
  t.match(view, { status: 'succeeded', output: { greeting: 'with files' }, artifacts: [/notes\.md$/, /raw\.bin$/] });
  t.same((await mcp.client.readResource({ uri: `skilld://jobs/${jobId}/artifacts/notes.md` })).contents, [{ uri: `skilld://jobs/${jobId}/artifacts/notes.md`, mimeType: 'text/markdown', text: '# Notes\n' }]);
  const binary = `skilld://jobs/${jobId}/artifacts/sub%20dir/raw.bin`;
  t.same((await mcp.client.readResource({ uri: binary })).contents, [{ uri: binary, blob: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') }], 'bytes that are not UTF-8 come as base64');
  await t.rejects(mcp.client.readResource({ uri: `skilld://jobs/${jobId}/artifacts/../state.json` }), { code: -32002 });
  await t.rejects(mcp.client.readResource({ uri: 'skilld://jobs/job-nope/result' }), { code: -32002, message: /JOB_NOT_FOUND|no job/ });
  const listed = await mcp.client.listResources();
  t.ok(listed.resources.some((resource) => resource.uri === `skilld://jobs/${jobId}/result`), 'the newest jobs are listed');
  const templates = await mcp.client.listResourceTemplates();
  t.same(templates.resourceTemplates.map((template) => template.uriTemplate), ['skilld://jobs/{job_id}/result', 'skilld://jobs/{job_id}/artifacts/{name}']);
});

t.test('resources: an artifact that is a link out of the artifacts folder is neither linked nor read; one that stays inside is read', async (t) => {
  const mcp = await session(t);
  const done = await call(mcp, 'echo-auto', { input: { scenario: 'links' } });
  const links = done.content.flatMap((block) => (block.type === 'resource_link' ? [block.uri] : []));
  const jobId = /^skilld:\/\/jobs\/(job-[^/]+)\/result$/.exec(links[0] ?? '')?.[1] as string;
  const artifact = (name: string): string => `skilld://jobs/${jobId}/artifacts/${name}`;
  t.same(links.slice(1), [artifact('alias.txt'), artifact('report.txt'), artifact('sub/inner.txt')], 'only the artifacts that stay inside are linked');
  t.same((await mcp.client.readResource({ uri: artifact('alias.txt') })).contents, [{ uri: artifact('alias.txt'), mimeType: 'text/plain', text: 'the report\n' }]);
  await t.rejects(mcp.client.readResource({ uri: artifact('leak.txt') }), { code: -32002, message: /has no artifact "leak\.txt"/ });
  await t.rejects(mcp.client.readResource({ uri: artifact('sub/passwd') }), { code: -32002 });
  await t.rejects(mcp.client.readResource({ uri: artifact('up/.fake-engine/calls.ndjson') }), { code: -32002 }, 'nothing is listed through a link to the folder above');
  const result = await mcp.client.readResource({ uri: `skilld://jobs/${jobId}/result` });
  t.match(JSON.parse((result.contents[0] as { text: string }).text), { warnings: ['ARTIFACT_LINK_OUTSIDE'], left_out: [/leak\.txt$/, /passwd$/, /up$/] });
});

t.test('tools/list offers only the engines that can run: one whose command is not there, or whose jobs the daemon refuses, is left out', async (t) => {
  const engines = Object.fromEntries(['codex', 'gemini', 'iflow', 'claude'].map((name) => [name, { command: [join(FIXTURES, name === 'gemini' ? 'no-such-gemini' : `fake-${name}.mjs`)] }]));
  // Without a sandbox, as root, Claude Code's jobs are refused (engines/list gives the reason).
  const asRoot = process.getuid?.() === 0;
  const partial = await TestDaemon.start({ config: { engines, sandbox: 'off' } });
  t.teardown(() => partial.cleanup());
  const mcp = await connectMcp(partial.socket);
  t.teardown(() => mcp.close());
  const { tools } = await mcp.client.listTools();
  const engine = (tools.find((tool) => tool.name === 'echo-auto')?.inputSchema.properties as Record<string, { enum?: string[]; default?: string }>)['engine'];
  t.same(engine?.enum, asRoot ? ['codex', 'iflow'] : ['codex', 'iflow', 'claude'], asRoot ? 'neither gemini (no command) nor claude (refused as root) is offered' : 'gemini cannot run: not offered');
  t.equal(engine?.default, 'codex');
});
