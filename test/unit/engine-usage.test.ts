// What each engine's one-shot output says its model calls used (ParsedTurn.usage), read from lines
// the real CLIs printed: Codex 0.169 and Gemini 0.61 driven against the scripted model server
// (test/fixtures/model-server.ts: 10 tokens in and 5 out per call), Claude Code 2.1.330 from the
// recorded transcripts, iFlow from the block it prints. Odd counts count nothing and never throw.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { acpUsage } from '../../daemon/engines/acp/usage.js';
import { claude } from '../../daemon/engines/claude.js';
import { codex } from '../../daemon/engines/codex.js';
import type { EngineAdapter, ParsedTurn } from '../../daemon/engines/engine.js';
import { gemini } from '../../daemon/engines/gemini.js';
import { iflow } from '../../daemon/engines/iflow.js';
import { usageAfterTurn, type Usage } from '../../daemon/model/usage.js';
import type { ClaudeEntry } from '../fixtures/claude-plans.js';
import { FIXTURES } from '../helpers/daemon.js';

function parse(adapter: EngineAdapter, lines: readonly string[], stream: 'stdout' | 'stderr' = 'stdout'): ParsedTurn {
  const parser = adapter.newParser();
  for (const line of lines) parser.line(stream, line);
  return parser.result();
}

const usage = (input_tokens: number, output_tokens: number, cached_input_tokens: number, requests: number): Usage => ({ input_tokens, output_tokens, cached_input_tokens, requests });

// ---------------------------------------------------------------------------------------------
// Codex `exec --json`: `turn.completed` carries the thread's running total

/** A start turn of two model calls (a command, then the answer), and its resume in another process. */
const CODEX_START = [
  '{"type":"thread.started","thread_id":"00000000-0000-0000-0000-000000000001"}',
  '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}',
  '{"type":"turn.started"}',
  '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \'touch approved.txt\'","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \'touch approved.txt\'","aggregated_output":"","exit_code":0,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"ran it"}}',
  '{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}',
];
const CODEX_RESUMED_END = '{"type":"turn.completed","usage":{"input_tokens":40,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}';

t.test('codex: turn.completed gives the tokens as reported, one request for the turn, spanning the session', async (t) => {
  const turn = parse(codex, CODEX_START);
  t.same(turn.usage, usage(20, 10, 0, 1), 'input already counts the cached tokens; exec does not count its two calls');
  t.equal(turn.usageSpan, 'session');
  const resumed = parse(codex, [...CODEX_START.slice(0, 6), CODEX_RESUMED_END]);
  t.same(resumed.usage, usage(40, 20, 0, 1), 'a resumed thread reports its total since the thread began (20 of them the first run\'s)');
});

t.test('codex: cached tokens are part of the input; reasoning is part of the output', async (t) => {
  const line = '{"type":"turn.completed","usage":{"input_tokens":5000,"cached_input_tokens":4096,"cache_write_input_tokens":0,"output_tokens":300,"reasoning_output_tokens":256}}';
  t.same(parse(codex, [line]).usage, usage(5000, 300, 4096, 1));
});

t.test('codex: several turn.completed in one process: the latest total stands, each counts a request', async (t) => {
  const second = '{"type":"turn.completed","usage":{"input_tokens":35,"cached_input_tokens":10,"output_tokens":15}}';
  t.same(parse(codex, [...CODEX_START, second]).usage, usage(35, 15, 10, 2), 'a running total is not added to itself');
});

t.test('codex: no usage when the turn failed or turn.completed carries none', async (t) => {
  t.equal(parse(codex, ['{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}']).usage, null);
  t.equal(parse(codex, ['{"type":"turn.completed"}']).usage, null);
  t.equal(parse(codex, ['{"type":"turn.completed","usage":null}']).usage, null);
  t.equal(parse(codex, CODEX_START.slice(0, 6)).usage, null, 'killed before the turn ended');
});

t.test('codex: a malformed usage counts 0 rather than throwing', async (t) => {
  t.same(parse(codex, ['{"type":"turn.completed","usage":"lots"}']).usage, usage(0, 0, 0, 1));
  t.same(parse(codex, ['{"type":"turn.completed","usage":[1,2]}']).usage, usage(0, 0, 0, 1));
  const odd = '{"type":"turn.completed","usage":{"input_tokens":"20","cached_input_tokens":-4,"output_tokens":1e400,"reasoning_output_tokens":{}}}';
  t.same(parse(codex, [odd]).usage, usage(0, 0, 0, 1));
  t.same(parse(codex, ['{"type":"turn.completed","usage":{"input_tokens":12.7,"cached_input_tokens":50,"output_tokens":3}}']).usage, usage(12, 3, 12, 1), 'whole tokens; never more cached than input');
});

// ---------------------------------------------------------------------------------------------
// Claude Code stream-json: the `result` event's `usage`, the calls counted by message id

/** The stdout lines of each one-shot run, or the live session's, of a recorded transcript. */
function claudeLines(name: string): string[][] {
  const entries = readFileSync(join(FIXTURES, 'transcripts', `claude-${name}.ndjson`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ClaudeEntry);
  const runs: string[][] = [[]];
  for (const entry of entries) {
    if (entry.dir === 'run') runs.push([]);
    else if (entry.dir === '<') runs.at(-1)?.push(JSON.stringify(entry.msg));
  }
  return runs.filter((run) => run.length > 0);
}

t.test('claude: each recorded run reports its own turn, a resumed one too (modelUsage runs from the session start)', async (t) => {
  const [first, resumed] = claudeLines('oneshot-turns');
  t.same(parse(claude, first ?? []).usage, usage(10, 5, 0, 1));
  t.same(parse(claude, resumed ?? []).usage, usage(10, 5, 0, 1), 'not modelUsage\'s 20 and 10');
  t.same(parse(claude, claudeLines('oneshot-tool')[0] ?? []).usage, usage(20, 10, 0, 2), 'the tool call and the answer: two responses, two requests');
  t.same(parse(claude, claudeLines('oneshot-lost-session')[0] ?? []).usage, usage(0, 0, 0, 0), 'no call at all');
});

t.test('claude: several results in one output add up, each with the calls before it', async (t) => {
  const [live] = claudeLines('live-turns');
  t.same(parse(claude, live ?? []).usage, usage(20, 10, 0, 2));
  const [withError] = claudeLines('live-model-error');
  t.same(parse(claude, withError ?? []).usage, usage(10, 5, 0, 1), 'the message made up for an API error (model <synthetic>) is no call');
});

t.test('claude: cache reads and writes are input, the reads are the cached part; one content block per event counts its message once', async (t) => {
  const block = (id: string, type: string): string => JSON.stringify({ type: 'assistant', message: { id, model: 'claude-sonnet-4-5', content: [{ type, text: 'x' }] } });
  const result = '{"type":"result","subtype":"success","is_error":false,"num_turns":3,"usage":{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":15000,"output_tokens":420,"iterations":[]}}';
  t.same(parse(claude, [block('msg_a', 'thinking'), block('msg_a', 'text'), block('msg_b', 'text'), result]).usage, usage(16203, 420, 15000, 2));
});

t.test('claude: a result printed alone (--output-format json) counts one request when tokens went through', async (t) => {
  const json = '{"duration_api_ms":91,"stop_reason":"end_turn","session_id":"00000000-0000-0000-0000-000000000001","usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10,"iterations":[]},"is_error":false,"num_turns":2,"subtype":"success","result":"ran it","type":"result"}';
  t.same(parse(claude, [json]).usage, usage(20, 10, 0, 1));
});

t.test('claude: no usage without a result, or in a result without one; a malformed one counts 0', async (t) => {
  t.equal(parse(claude, claudeLines('oneshot-turns')[0]?.slice(0, -1) ?? []).usage, null, 'killed before its result');
  t.equal(parse(claude, ['{"type":"result","subtype":"success","is_error":false}']).usage, null);
  t.same(parse(claude, ['{"type":"result","subtype":"success","is_error":false,"usage":"x"}']).usage, usage(0, 0, 0, 0));
  const odd = '{"type":"result","subtype":"success","usage":{"input_tokens":null,"cache_creation_input_tokens":"9","cache_read_input_tokens":-1,"output_tokens":7}}';
  t.same(parse(claude, [odd]).usage, usage(0, 7, 0, 1));
  t.same(parse(claude, ['{"type":"assistant","message":"odd"}', '{"type":"assistant","message":{"id":7}}', odd]).usage, usage(0, 7, 0, 1), 'an assistant event without a message id counts no call');
});

// ---------------------------------------------------------------------------------------------
// Gemini `--output-format json`: the document's `stats.models`

/** The document of a one-shot turn of two model calls (a shell command, then the answer); `tools` shortened. */
const GEMINI_DOC = `{
  "session_id": "00000000-0000-0000-0000-000000000001",
  "response": "ran it",
  "stats": {
    "models": {
      "gemini-2.5-flash": {
        "api": {
          "totalRequests": 2,
          "totalErrors": 0,
          "totalLatencyMs": 70,
          "errorsByType": {}
        },
        "tokens": {
          "input": 20,
          "prompt": 20,
          "candidates": 10,
          "total": 30,
          "cached": 0,
          "thoughts": 0,
          "tool": 0
        },
        "roles": {
          "main": {
            "totalRequests": 2,
            "totalErrors": 0,
            "totalLatencyMs": 70,
            "tokens": {
              "input": 20,
              "prompt": 20,
              "candidates": 10,
              "total": 30,
              "cached": 0,
              "thoughts": 0,
              "tool": 0
            }
          }
        }
      }
    },
    "tools": {
      "totalCalls": 1
    },
    "files": {
      "totalLinesAdded": 0,
      "totalLinesRemoved": 0
    }
  }
}`.split('\n');

function geminiDoc(stats: unknown): string[] {
  return JSON.stringify({ session_id: 'S', response: 'x', stats }, null, 2).split('\n');
}

t.test('gemini: the requests and tokens of stats.models, as recorded', async (t) => {
  const turn = parse(gemini, GEMINI_DOC);
  t.same(turn.usage, usage(20, 10, 0, 2));
  t.equal(turn.usageSpan, 'turn', 'a one-shot resume starts its stats afresh');
});

t.test('gemini: models add up; prompt counts the cached tokens, tool prompts are input, thoughts are output', async (t) => {
  const models = {
    'gemini-2.5-pro': { api: { totalRequests: 3, totalErrors: 1 }, tokens: { input: 400, prompt: 1000, candidates: 50, total: 1300, cached: 600, thoughts: 200, tool: 50 } },
    'gemini-2.5-flash-lite': { api: { totalRequests: 1 }, tokens: { input: 80, prompt: 80, candidates: 20, total: 100, cached: 0, thoughts: 0, tool: 0 } },
  };
  t.same(parse(gemini, geminiDoc({ models })).usage, usage(1130, 270, 600, 4), 'a failed request is a request too');
});

t.test('gemini: no usage without stats.models (an error document has none); malformed counts count 0', async (t) => {
  t.equal(parse(gemini, geminiDoc({ tools: { totalCalls: 0 } })).usage, null);
  t.equal(parse(gemini, JSON.stringify({ session_id: 'S', error: { type: 'Error', message: 'Quota exceeded', code: 429 } }, null, 2).split('\n')).usage, null);
  t.same(parse(gemini, geminiDoc({ models: 'many' })).usage, usage(0, 0, 0, 0));
  t.same(parse(gemini, geminiDoc({ models: { m: { api: 'x', tokens: { prompt: '10', candidates: 5 } }, n: null } })).usage, usage(0, 5, 0, 1), 'tokens without a request count: one');
});

// ---------------------------------------------------------------------------------------------
// iFlow: the `<Execution Info>` block

/** The block as iFlow prints it after a run of three assistant rounds. */
const IFLOW_INFO = `<Execution Info>
{ "session-id": "session-e06bbd16-0000-4000-8000-000000000001", "conversation-id": "c-1",
  "assistantRounds": 3, "executionTimeMs": 3803,
  "tokenUsage": { "input": 812, "output": 45, "total": 857 } }
</Execution Info>`.split('\n');

t.test('iflow: tokenUsage and assistantRounds of the info block, on stderr or stdout', async (t) => {
  t.same(parse(iflow, IFLOW_INFO, 'stderr').usage, usage(812, 45, 0, 3));
  t.same(parse(iflow, ['Done.', ...IFLOW_INFO]).usage, usage(812, 45, 0, 3));
});

t.test('iflow: two blocks add up; none, or one without tokenUsage, is no usage; malformed counts count 0', async (t) => {
  const parser = iflow.newParser();
  for (const line of IFLOW_INFO) parser.line('stderr', line);
  parser.line('stdout', '<Execution Info>{"tokenUsage": {"input": 8, "output": 2}}</Execution Info>');
  t.same(parser.result().usage, usage(820, 47, 0, 4), 'a block without rounds counts one request');
  t.equal(parse(iflow, ['Just text']).usage, null);
  t.equal(parse(iflow, ['<Execution Info>{"session-id": "session-1", "assistantRounds": 1}</Execution Info>']).usage, null);
  t.same(parse(iflow, ['<Execution Info>{"tokenUsage": [], "assistantRounds": "3"}</Execution Info>']).usage, usage(0, 0, 0, 0));
});

// ---------------------------------------------------------------------------------------------
// ACP (live): the prompt's answer

/** The answers of the recorded Gemini ACP sessions, in order. */
function acpAnswers(plan: string): unknown[] {
  const lines = readFileSync(join(FIXTURES, 'transcripts', `gemini-acp-${plan}.ndjson`), 'utf8').trim().split('\n');
  const results = lines.map((l) => (JSON.parse(l) as { dir: string; msg: { result?: Record<string, unknown> } })).filter((e) => e.dir === '<' && e.msg.result?.['stopReason'] !== undefined);
  return results.map((e) => e.msg.result);
}

t.test('acp: _meta.quota.token_count of the recorded answers; a cancelled turn\'s has none', async (t) => {
  t.same(acpAnswers('turns').map(acpUsage), [usage(10, 5, 0, 1), usage(10, 5, 0, 1)]);
  t.same(acpAnswers('approve-allow').map(acpUsage), [usage(20, 10, 0, 1)], 'Gemini sums the turn\'s calls and does not count them');
  t.same(acpAnswers('cancel').map(acpUsage), [null, usage(10, 5, 0, 1)]);
});

t.test('acp: no quota is no usage; a malformed one counts 0', async (t) => {
  t.equal(acpUsage({ stopReason: 'end_turn' }), null);
  t.equal(acpUsage({ stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 1, totalTokens: 6 } }), null, 'the unstable usage member is not read');
  t.equal(acpUsage(null), null);
  t.same(acpUsage({ stopReason: 'end_turn', _meta: { quota: { token_count: 'x' } } }), usage(0, 0, 0, 0));
  t.same(acpUsage({ stopReason: 'end_turn', _meta: { quota: { token_count: { input_tokens: 12, output_tokens: '3' } } } }), usage(12, 0, 0, 1));
});

t.test("a job's usage after each turn: a turn's report is added; a session's (Codex one-shot) stands for the tokens, its calls added", async (t) => {
  const turn = (input: number, output: number, requests: number) => ({ input_tokens: input, output_tokens: output, cached_input_tokens: 0, requests });
  t.same(usageAfterTurn(undefined, turn(10, 5, 1), 'turn'), turn(10, 5, 1));
  t.same(usageAfterTurn(turn(10, 5, 1), turn(10, 5, 1), 'turn'), turn(20, 10, 2));
  t.same(usageAfterTurn(turn(10, 5, 1), turn(20, 10, 1), 'session'), turn(20, 10, 2), 'the session total replaces the tokens');
  t.same(usageAfterTurn(turn(40, 20, 3), turn(10, 5, 1), 'session'), turn(40, 20, 4), 'a session started again never takes tokens away');
});
