// Each engine's agentText, fed what the real CLIs print: the recorded transcripts of the live
// protocols, and the one-shot output of the fake engines (which print what the real CLIs print).
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentMessages, agentTranscript, type AgentTextOf } from '../../daemon/engines/agent-text.js';
import { claude, claudeAgentText } from '../../daemon/engines/claude.js';
import { codex, codexAgentText } from '../../daemon/engines/codex.js';
import type { EngineAdapter } from '../../daemon/engines/engine.js';
import { gemini, geminiAgentText } from '../../daemon/engines/gemini.js';
import { iflow, iflowAgentText } from '../../daemon/engines/iflow.js';
import { ENGINES } from '../../daemon/engines/registry.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures');

/** What the engine printed in a recorded transcript: each of its messages as one stdout line. */
function printed(name: string): string[] {
  return readFileSync(join(fixtures, 'transcripts', `${name}.ndjson`), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { dir: string; msg?: unknown })
    .filter((entry) => entry.dir === '<')
    .map((entry) => JSON.stringify(entry.msg));
}

/** The whole messages the daemon would emit as `message` events for these lines. */
function messages(lines: readonly string[], textOf: AgentTextOf): string[] {
  const said: string[] = [];
  const reader = new AgentMessages(textOf, (text) => said.push(text));
  for (const line of lines) reader.line(line);
  reader.end();
  return said;
}

t.test('every engine reads its own output', async (t) => {
  t.same(Object.fromEntries(Object.entries(ENGINES).map(([name, adapter]) => [name, adapter.agentText])), { codex: codexAgentText, gemini: geminiAgentText, iflow: iflowAgentText, claude: claudeAgentText });
});

t.test('codex app-server: each completed agentMessage once (no deltas, not the items repeated at turn end)', async (t) => {
  t.same(messages(printed('codex-app-server-turns'), codexAgentText), ['Which city should I use?', 'Which city should I use?']);
  t.same(messages(printed('codex-app-server-approve-accept'), codexAgentText), ['ran it']);
  t.same(messages(printed('codex-app-server-interrupt'), codexAgentText), ['Done.']);
  t.same(messages(printed('codex-app-server-model-error'), codexAgentText), [], 'a failed turn says nothing');
  t.equal(agentTranscript(printed('codex-app-server-turns'), codexAgentText), 'Which city should I use?\nWhich city should I use?\n');
});

t.test('claude stream-json, one-shot and live: the text of assistant events; a tool call alone says nothing', async (t) => {
  t.same(messages(printed('claude-oneshot-turns'), claudeAgentText), ['Which city should I use?', 'Done.']);
  t.same(messages(printed('claude-oneshot-tool'), claudeAgentText), ['ran it']);
  t.same(messages(printed('claude-oneshot-lost-session'), claudeAgentText), []);
  t.same(messages(printed('claude-live-turns'), claudeAgentText), ['Which city should I use?', 'Done.']);
  t.same(messages(printed('claude-live-model-error'), claudeAgentText), ['API Error: 400 bad request from the model', 'Done.']);
  t.same(messages(printed('claude-live-approve-deny'), claudeAgentText), ['ran it']);
});

t.test('ACP (gemini --acp, and iflow alike): message chunks are pieces, ended by a tool call or the end of the turn', async (t) => {
  for (const textOf of [geminiAgentText, iflowAgentText]) {
    t.same(messages(printed('gemini-acp-turns'), textOf), ['Which city should I use?', 'Done.']);
    t.same(messages(printed('gemini-acp-tool-auto'), textOf), ['ran it']);
    t.same(messages(printed('gemini-acp-cancel'), textOf), ['Done.']);
    t.equal(agentTranscript(printed('gemini-acp-turns'), textOf), 'Which city should I use?\nDone.\n', 'one line per turn, not glued together');
    t.equal(agentTranscript(printed('gemini-acp-approve-allow'), textOf), 'ran it\n');
  }
  const chunk = (text: string): string => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });
  const update = (sessionUpdate: string): string => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate, toolCallId: 'c', content: { type: 'text', text: 'not said' } } } });
  const streamed = [chunk('Let me '), chunk('look.'), update('agent_thought_chunk'), update('tool_call'), chunk('Found '), chunk('it.'), JSON.stringify({ jsonrpc: '2.0', id: 3, result: { stopReason: 'end_turn' } })];
  t.same(messages(streamed, geminiAgentText), ['Let me look.', 'Found it.'], 'a real stream: several chunks make one message; thoughts say nothing');
  t.equal(agentTranscript(streamed, geminiAgentText), 'Let me look.\nFound it.\n');
  t.equal(agentTranscript(streamed.slice(0, 2), geminiAgentText), 'Let me look.', 'a message still being streamed has no line break yet');
});

/** The stdout of one fake engine's one-shot turn on `scenario`. */
function oneShot(t: Test, adapter: EngineAdapter, scenario: string, env: Record<string, string> = {}): string[] {
  const cwd = mkdtempSync(join(tmpdir(), 'skilld-agent-text-'));
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
  const argv = adapter.startArgs(`Say it\n- scenario: "${scenario}"\n`, null);
  const stdout = execFileSync(process.execPath, [join(fixtures, `fake-${adapter.name}.mjs`), ...argv], { cwd, input: '', env: { ...process.env, ...env }, encoding: 'utf8' });
  return stdout.replace(/\n$/, '').split('\n');
}

const DONE = 'Done.\n```json\n{"greeting": "hello", "__SKILL_DONE__": true}\n```';

t.test('one-shot turns: the final message of each engine, without its envelope', async (t) => {
  t.same(messages(oneShot(t, codex, 'ok'), codexAgentText), [DONE], 'codex exec --json: the agent_message item, not the reasoning');
  t.same(messages(oneShot(t, gemini, 'ok'), geminiAgentText), [DONE], "gemini: the pretty-printed document's response");
  t.same(messages(oneShot(t, claude, 'approve'), claudeAgentText), [DONE], 'claude: the text after the tool call; the call itself says nothing');
  t.same(messages(oneShot(t, iflow, 'ok'), iflowAgentText), [DONE], 'iflow: its plain lines are one message');
  const infoOnStdout = oneShot(t, iflow, 'ok', { FAKE_IFLOW_INFO_STREAM: 'stdout' });
  t.ok(infoOnStdout.some((line) => line.includes('"session-id"')), 'the Execution Info block is on stdout');
  t.same(messages(infoOnStdout, iflowAgentText), [DONE], 'and says nothing');
  t.equal(agentTranscript(infoOnStdout, iflowAgentText), `${DONE}\n`);
  t.equal(agentTranscript(oneShot(t, codex, 'ok'), codexAgentText), `${DONE}\n`);
});

t.test("gemini: only the document's own response member is a message", async (t) => {
  t.same(geminiAgentText('  "response": "say \\"hi\\"\\nthen go",'), { text: 'say "hi"\nthen go', piece: false });
  t.equal(geminiAgentText('      "response": "nested deeper"'), null, 'a nested member is not the answer');
  t.equal(geminiAgentText('  "response": "",'), null, 'an empty response says nothing');
  t.equal(geminiAgentText('  "response": "bad \\q escape",'), null, 'a broken one neither');
  t.same(geminiAgentText('{"session_id":"s","response":"on one line"}'), { text: 'on one line', piece: false });
  t.equal(geminiAgentText('{"session_id":"s"}'), null);
  t.equal(geminiAgentText('Loaded cached credentials.'), null);
});

t.test('iflow: plain lines are pieces; an Execution Info block is quiet to its end', async (t) => {
  t.same(iflowAgentText('The answer <Execution Info>'), { text: 'The answer \n', piece: true, quietUntil: '</Execution Info>' });
  t.same(messages(['a', '<Execution Info>{"session-id":"x"}</Execution Info>', 'b'], iflowAgentText), ['a\nb'], 'a block on one line');
  t.equal(iflowAgentText('</Execution Info>'), null);
  t.same(messages(['one', JSON.stringify({ greeting: 'hello' })], iflowAgentText), [`one\n${JSON.stringify({ greeting: 'hello' })}`], 'a JSON answer is text: only JSON-RPC lines are protocol');
});

t.test('codex and claude: lines that are not their events say nothing', async (t) => {
  for (const textOf of [codexAgentText, claudeAgentText]) {
    for (const line of ['', 'not json', '[1]', '{"type":"item.completed","item":{"type":"reasoning","text":"x"}}', '{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}', '{"method":"item/completed","params":{}}']) t.equal(textOf(line), null, line);
  }
});

t.test('AgentMessages: pieces are joined until a whole message or the end; blank text is no message', async (t) => {
  const said: string[] = [];
  const reader = new AgentMessages((line) => (line.startsWith('+') ? { text: line.slice(1), piece: true } : line === '' ? null : { text: line, piece: false }), (text) => said.push(text));
  for (const line of ['+a', '+b', 'whole', '+  ', '  ', '+c']) reader.line(line);
  t.same(said, ['ab', 'whole']);
  reader.end();
  t.same(said, ['ab', 'whole', 'c']);
  reader.end();
  t.same(said, ['ab', 'whole', 'c'], 'nothing twice');
});
