// The Claude Code stream-json live session against the fake Claude in stream-json mode (which
// prints what the real one prints; see fake-claude-transcripts.test.ts). The real CLI's one-shot
// mode: test/e2e/real-engines.test.ts.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeStreamJson } from '../../daemon/engines/claude/stream-json.js';
import type { LiveEvent, LiveStart, LiveTurnResult } from '../../daemon/engines/live-session.js';
import type { Usage } from '../../daemon/model/usage.js';
import type { ClaudeEntry } from '../fixtures/claude-plans.js';
import { FIXTURES } from '../helpers/daemon.js';
import { approvalRound, autoToolRuns, diesMidTurn, disposeInFlight, interruptHanging, startLiveIn, twoTurns, type LiveProcess } from '../helpers/live-process.js';

const FAKE = [join(FIXTURES, 'fake-claude.mjs')];

async function live(t: { teardown(fn: () => unknown): void }, approvals: LiveStart['approvals'] = 'auto'): Promise<LiveProcess & { cwd: string; sessionId: string }> {
  const sessionId = randomUUID();
  return { ...(await startLiveIn(t, FAKE, claudeStreamJson, { engine: 'claude', model: null, approvals, newSessionId: sessionId })), sessionId };
}

t.test('argv: stream-json both ways, the chosen session id in one element, approvals by mode', async (t) => {
  const start: LiveStart = { engine: 'claude', model: null, cwd: '/', approvals: 'auto', newSessionId: 'S' };
  const base = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--session-id=S'];
  t.same(claudeStreamJson.argv(start), [...base, '--dangerously-skip-permissions']);
  t.same(claudeStreamJson.argv({ ...start, approvals: 'ask', model: '--m' }), [...base, '--model=--m', '--permission-prompt-tool', 'stdio']);
});

t.test('two turns in one process: open gives the chosen session id, each turn ends at its result, a reply starting with dashes arrives verbatim', async (t) => {
  const p = await live(t);
  t.equal(await twoTurns(t, p), p.sessionId, 'nothing is printed before the first input: the id is the one we chose');
  t.equal(await p.end(), 0, 'stdin closed while idle: it exits 0');
});

t.test('interrupt: a control_request ends the turn as interrupted, and the process serves the next one', async (t) => {
  const p = await live(t);
  await interruptHanging(t, p);
  p.session.interrupt();
  t.pass('an interrupt between turns is a no-op');
});

t.test('approvals: can_use_tool is an approval event; allow runs the command with its input, deny does not', async (t) => {
  for (const decision of ['allow', 'deny'] as const) {
    await approvalRound(t, await live(t, 'ask'), decision, { kind: 'command', summary: 'run: touch approved.txt', detail: { tool_name: 'Bash', input: { command: 'touch approved.txt' } } });
  }
});

t.test('approvals in auto mode: the tool runs unasked', async (t) => autoToolRuns(t, await live(t, 'auto')));

t.test('dispose rejects the turn in flight at once, and every later call', async (t) => disposeInFlight(t, await live(t)));

t.test('the process dying mid-turn rejects the turn', async (t) => diesMidTurn(t, await live(t)));

t.test('in memory: an error result fails the turn with its errors; one answer per request; requests outside a turn are refused', async (t) => {
  const sent: Array<Record<string, unknown>> = [];
  const session = claudeStreamJson.connect({ send: (line) => sent.push(JSON.parse(line) as Record<string, unknown>) }, { engine: 'claude', model: null, cwd: '/', approvals: 'ask', newSessionId: 'S' });
  session.receive('{"type":"control_request","request_id":"r0","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/x"}}}');
  t.match(sent.pop(), { type: 'control_response', response: { request_id: 'r0', response: { behavior: 'deny' } } }, 'no turn: denied');
  const events: LiveEvent[] = [];
  const turn = session.prompt('hi', (e) => events.push(e));
  t.same(sent.pop(), { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } });
  session.receive('{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Edit","input":{"file_path":"/a/b.txt","old_string":"x"}}}');
  session.receive('{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"WebFetch","input":{"url":"http://x/\\nline"}}}');
  session.receive('{"type":"control_request","request_id":"r3","request":{"subtype":"mcp_message"}}');
  t.match(sent.pop(), { type: 'control_response', response: { subtype: 'error', request_id: 'r3' } }, 'an unknown request gets an error answer');
  t.match(events, [
    { type: 'approval', request: { id: 'r1', kind: 'file_change', summary: 'change files: /a/b.txt' } },
    { type: 'approval', request: { id: 'r2', kind: 'tool', summary: 'WebFetch: {"url":"http://x/\\nline"}' } },
  ]);
  session.answer('r1', 'allow');
  session.answer('r1', 'deny');
  session.answer('nope', 'allow');
  t.same(sent, [{ type: 'control_response', response: { subtype: 'success', request_id: 'r1', response: { behavior: 'allow', updatedInput: { file_path: '/a/b.txt', old_string: 'x' } } } }], 'one answer, with the input as it came');
  session.receive('not json');
  session.receive('{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["API Error: 500"]}');
  t.same(await turn, { outcome: 'failed', messages: [], error: 'API Error: 500', usage: null });
});

t.test('in memory, as the real one said it: each result reports its own turn\'s usage, the calls counted by message id', async (t) => {
  const results: Array<LiveTurnResult['usage']> = [];
  for (const plan of ['turns', 'approve-allow', 'interrupt', 'model-error']) {
    const session = claudeStreamJson.connect({ send: () => undefined }, { engine: 'claude', model: null, cwd: '/', approvals: 'ask', newSessionId: 'S' });
    const entries = readFileSync(join(FIXTURES, 'transcripts', `claude-live-${plan}.ndjson`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ClaudeEntry);
    for (const entry of entries) {
      if (entry.dir === '>' && entry.msg['type'] === 'user') void session.prompt('x', () => undefined).then((result) => results.push(result.usage));
      else if (entry.dir === '<') session.receive(JSON.stringify(entry.msg));
      await Promise.resolve();
    }
  }
  const call = (n: number): Usage => ({ input_tokens: 10 * n, output_tokens: 5 * n, cached_input_tokens: 0, requests: n });
  // turns: 10 and 5 each, though modelUsage says 20 and 10 at the second; interrupt and model-error: no call answered first.
  t.same(results, [call(1), call(1), call(2), call(0), call(1), call(0), call(1)]);
});
