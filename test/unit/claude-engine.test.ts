// The claude one-shot adapter: argv builders, and the parser fed with what the real Claude Code
// 2.1.330 printed (transcripts recorded by test/fixtures/record-claude.ts).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { claude } from '../../daemon/engines/claude.js';
import { routePrompt } from '../../daemon/engines/prompt-route.js';
import type { ClaudeEntry } from '../fixtures/claude-plans.js';
import { FIXTURES } from '../helpers/daemon.js';

/** The stdout lines of each one-shot run of a recorded transcript. */
function runs(name: string): Array<{ exit: number | null; lines: string[] }> {
  const entries = readFileSync(join(FIXTURES, 'transcripts', `claude-oneshot-${name}.ndjson`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ClaudeEntry);
  const out: Array<{ exit: number | null; lines: string[] }> = [];
  for (const entry of entries) {
    if (entry.dir === 'run') out.push({ exit: entry.exit, lines: [] });
    else out.at(-1)?.lines.push(JSON.stringify(entry.msg));
  }
  return out;
}

function parse(lines: string[]): ReturnType<ReturnType<typeof claude.newParser>['result']> & { ended: boolean } {
  const parser = claude.newParser();
  for (const line of lines) parser.line('stdout', line);
  return { ...parser.result(), ended: parser.turnEnded };
}

const ID = '00000000-0000-0000-0000-000000000001';
const ONE_CALL = { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, requests: 1 };
const NO_CALL = { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, requests: 0 };

t.test('start argv: print mode, stream-json, tools unasked, the prompt after --', async (t) => {
  t.same(claude.startArgs('Run the skill.', null), ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--', 'Run the skill.']);
  t.same(claude.startArgs('--help me', 'claude-x'), ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--model=claude-x', '--', '--help me']);
});

t.test('resume argv: --resume=<id> in one element, the prompt after --; a null prompt (stdin) leaves out --', async (t) => {
  t.same(claude.resumeArgs(ID, '- Rome', null), ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', `--resume=${ID}`, '--', '- Rome']);
  t.same(claude.resumeArgs(ID, null, 'm'), ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', `--resume=${ID}`, '--model=m']);
  t.same(claude.startArgs(null, null), ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
});

t.test('prompts that look like options are one element after --, in start and resume', async (t) => {
  for (const prompt of ['--help me', '-p', '--', '--resume=x', 'a\n--yolo']) {
    for (const argv of [claude.startArgs(prompt, null), claude.resumeArgs('S', prompt, null)]) {
      t.equal(argv.at(-1), prompt);
      t.equal(argv.at(-2), '--');
      t.equal(argv.indexOf('--'), argv.length - 2, 'the only -- is the one before the prompt');
    }
  }
});

t.test('prompt routing: on stdin, however small; an argument only where stdin is taken; never an empty one', async (t) => {
  t.same(routePrompt(claude, 'x'.repeat(1000), true), { via: 'stdin' });
  t.same(routePrompt(claude, 'x'.repeat(1000), false), { via: 'argv' });
  t.same(routePrompt(claude, 'x'.repeat(1_000_000), true), { via: 'stdin' });
  t.match(routePrompt(claude, '', true), { via: 'refused', reason: 'claude does not run on an empty prompt' });
  t.match(routePrompt(claude, 'x'.repeat(1_000_000), false), { via: 'refused' });
});

t.test('probe: --help mentions --resume, and --resume=<id> --help exits 0', async (t) => {
  t.same(claude.probe, { helpHint: '--resume', resumeCheckArgs: ['--resume=probe-session', '--help'] });
});

t.test('recorded turn: the session id from init, the assistant text, the result ends the turn', async (t) => {
  const [first, second] = runs('turns');
  t.same(parse(first?.lines ?? []), { sessionId: ID, messages: ['Which city should I use?'], engineError: null, usage: ONE_CALL, usageSpan: 'turn', ended: true });
  t.same(parse(second?.lines ?? []), { sessionId: ID, messages: ['Done.'], engineError: null, usage: ONE_CALL, usageSpan: 'turn', ended: true }, 'the resumed run reports the same session, and its own turn\'s usage');
});

t.test('recorded tool run: the tool call is no message; the text after its result is', async (t) => {
  const [run] = runs('tool');
  t.same(parse(run?.lines ?? []), { sessionId: ID, messages: ['ran it'], engineError: null, usage: { input_tokens: 20, output_tokens: 10, cached_input_tokens: 0, requests: 2 }, usageSpan: 'turn', ended: true });
});

t.test('recorded lost session: exit 1, an error result without init names the missing session', async (t) => {
  const [run] = runs('lost-session');
  t.equal(run?.exit, 1);
  t.same(parse(run?.lines ?? []), { sessionId: null, messages: [], engineError: 'No conversation found with session ID: 11111111-2222-3333-4444-555555555555', usage: NO_CALL, usageSpan: 'turn', ended: true });
});

t.test('an is_error result without errors reports its result text; stderr and stray lines are ignored', async (t) => {
  const parser = claude.newParser();
  parser.line('stderr', '{"type":"result","subtype":"success","is_error":false}');
  parser.line('stdout', 'not json');
  t.equal(parser.turnEnded, false);
  parser.line('stdout', '{"type":"system","subtype":"init","session_id":"--yolo"}');
  parser.line('stdout', '{"type":"assistant","message":{"content":[{"type":"text","text":"Prompt is too long"}]}}');
  parser.line('stdout', '{"type":"result","subtype":"success","is_error":true,"result":"Prompt is too long"}');
  t.same(parser.result(), { sessionId: null, messages: ['Prompt is too long'], engineError: 'Prompt is too long', usage: null, usageSpan: 'turn' }, 'a session id that starts with a dash is not kept');
  const bare = claude.newParser();
  bare.line('stdout', '{"type":"result","subtype":"error_max_turns","is_error":true}');
  t.equal(bare.result().engineError, 'turn ended with error_max_turns');
});
