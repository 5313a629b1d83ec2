import t from 'tap';
import { claude } from '../../daemon/engines/claude.js';
import { codex } from '../../daemon/engines/codex.js';
import { sessionIdOf, type EngineAdapter, type TurnParser } from '../../daemon/engines/engine.js';
import { gemini } from '../../daemon/engines/gemini.js';
import { iflow } from '../../daemon/engines/iflow.js';
import { ENGINES } from '../../daemon/engines/registry.js';

const TRICKY_PROMPTS = ['--help me', '- yes, go on', '-p', '--', 'line one\nline two\n  --yolo', ''];

function feed(parser: TurnParser, stream: 'stdout' | 'stderr', text: string): void {
  for (const line of text.split('\n')) parser.line(stream, line);
}

t.test('the registry knows exactly codex, gemini, iflow and claude', async (t) => {
  t.same(Object.keys(ENGINES).sort(), ['claude', 'codex', 'gemini', 'iflow']);
  t.equal(ENGINES.claude, claude);
  t.equal(ENGINES.codex, codex);
  t.equal(ENGINES.gemini, gemini);
  t.equal(ENGINES.iflow, iflow);
  for (const [name, adapter] of Object.entries(ENGINES)) t.equal(adapter.name, name);
});

// ---------------------------------------------------------------------------------------------
// argv builders (docs/engines.md)

t.test('TP-12 TP-13 codex start argv: exec --skip-git-repo-check --json --yolo -- <prompt>', async (t) => {
  t.same(codex.startArgs('Run the skill.', null), ['exec', '--skip-git-repo-check', '--json', '--yolo', '--', 'Run the skill.']);
});

t.test('TP-12 TP-13 codex uses --yolo and never --full-auto, in start and resume', async (t) => {
  for (const argv of [codex.startArgs('x', null), codex.startArgs('x', 'gpt-5'), codex.resumeArgs('t', 'x', null), codex.resumeArgs('t', 'x', 'gpt-5')]) {
    t.ok(argv.includes('--yolo'), `--yolo in ${JSON.stringify(argv)}`);
    t.notOk(argv.includes('--full-auto'), `no --full-auto in ${JSON.stringify(argv)}`);
  }
});

t.test('codex --model=MODEL is one element before the -- separator', async (t) => {
  t.same(codex.startArgs('Run.', 'gpt-5-codex'), ['exec', '--skip-git-repo-check', '--json', '--yolo', '--model=gpt-5-codex', '--', 'Run.']);
  t.same(codex.resumeArgs('T-1', 'Paris', 'gpt-5-codex'), ['exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', '--model=gpt-5-codex', '--', 'T-1', 'Paris']);
});

t.test('a model name is never an element of its own: one that looks like an option stays inside --model=', async (t) => {
  for (const model of ['--version', '-h', '-m', 'a=b', 'two words', 'line\nbreak']) {
    for (const argv of [codex.startArgs('p', model), codex.resumeArgs('T', 'p', model), gemini.startArgs('p', model), gemini.resumeArgs('S', 'p', model)]) {
      t.ok(argv.includes(`--model=${model}`), `${JSON.stringify(model)} in ${JSON.stringify(argv)}`);
      t.notOk(argv.includes(model), 'never a bare element');
      t.notOk(argv.includes('-m'), 'never after a bare -m');
    }
  }
});

t.test('codex: a null prompt (the prompt goes on stdin) is the `-` argument, after --', async (t) => {
  t.same(codex.startArgs(null, null), ['exec', '--skip-git-repo-check', '--json', '--yolo', '--', '-']);
  t.same(codex.resumeArgs('T-1', null, 'm'), ['exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', '--model=m', '--', 'T-1', '-']);
});

t.test('gemini and iflow: a null prompt (the prompt goes on stdin) leaves out --prompt', async (t) => {
  t.same(gemini.startArgs(null, null), ['--yolo', '--output-format', 'json']);
  t.same(gemini.resumeArgs('S-1', null, null), ['--resume=S-1', '--yolo', '--output-format', 'json']);
  t.same(iflow.startArgs(null, null), ['--yolo', '--thinking']);
});

t.test('PR-8 TP-14 codex resume: thread id positional after --, before the prompt, no named flag', async (t) => {
  const id = '0199a5b2-6c1e-7d3a-9f00-1234567890ab';
  const argv = codex.resumeArgs(id, 'Paris', null);
  t.same(argv, ['exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', '--', id, 'Paris']);
  const sep = argv.indexOf('--');
  t.equal(argv[sep + 1], id, 'thread id right after --');
  t.equal(argv[sep + 2], 'Paris', 'prompt after the thread id');
  t.equal(argv.length, sep + 3, 'nothing after the prompt');
  for (const flag of ['--thread', '--thread-id', '--session', '--session-id', '--resume', '--last']) t.notOk(argv.includes(flag), `no ${flag}`);
});

t.test('codex prompts that look like options stay one verbatim positional after --', async (t) => {
  for (const prompt of TRICKY_PROMPTS) {
    const start = codex.startArgs(prompt, null);
    t.equal(start[start.length - 2], '--', `-- before ${JSON.stringify(prompt)}`);
    t.equal(start[start.length - 1], prompt, `start keeps ${JSON.stringify(prompt)}`);
    t.equal(start.filter((a) => a === prompt).length, prompt === '--' ? 2 : 1, 'exactly one element holds the prompt');
    const resume = codex.resumeArgs('T', prompt, null);
    t.same(resume.slice(-3), ['--', 'T', prompt], `resume keeps ${JSON.stringify(prompt)}`);
  }
});

t.test('TP-8 TP-9 gemini start argv (the same for both modes) has --yolo', async (t) => {
  t.same(gemini.startArgs('Run the skill.', null), ['--yolo', '--output-format', 'json', '--prompt=Run the skill.']);
  t.ok(gemini.startArgs('x', null).includes('--yolo'));
});

t.test('gemini --model=MODEL goes before --prompt=', async (t) => {
  t.same(gemini.startArgs('Run.', 'gemini-2.5-pro'), ['--yolo', '--output-format', 'json', '--model=gemini-2.5-pro', '--prompt=Run.']);
  t.same(gemini.resumeArgs('S-1', 'Paris', 'gemini-2.5-pro'), ['--resume=S-1', '--yolo', '--output-format', 'json', '--model=gemini-2.5-pro', '--prompt=Paris']);
});

t.test('PR-9 TP-14 gemini resume: --resume=<session_id> in one element, keeps --yolo', async (t) => {
  const id = '6f1c2a8e-2b7d-4c1e-9a55-0d3e4f5a6b7c';
  const argv = gemini.resumeArgs(id, 'Paris', null);
  t.same(argv, [`--resume=${id}`, '--yolo', '--output-format', 'json', '--prompt=Paris']);
  t.notOk(argv.includes(id), 'the session id itself, never a bare element');
  t.notOk(argv.includes('latest'), 'no picker/latest');
});

t.test('TP-10 TP-11 iflow start argv (the same for both modes) has --yolo and --thinking', async (t) => {
  t.same(iflow.startArgs('Run the skill.', null), ['--yolo', '--thinking', '--prompt=Run the skill.']);
  t.same(iflow.startArgs('Run the skill.', 'some-model'), ['--yolo', '--thinking', '--prompt=Run the skill.'], 'iflow takes no model flag');
});

t.test('PR-10 TP-14 iflow resume: --resume <session-id>, keeps --yolo and --thinking', async (t) => {
  const id = 'session-0123456789abcdef0123456789abcdef';
  t.same(iflow.resumeArgs(id, 'Paris', null), ['--resume', id, '--yolo', '--thinking', '--prompt=Paris']);
});

t.test('TP-14 every resume argv keeps the auto-execution flags of its start argv', async (t) => {
  const adapters: EngineAdapter[] = [codex, gemini, iflow];
  for (const adapter of adapters) {
    const start = adapter.startArgs('p', null);
    const resume = adapter.resumeArgs('id-1', 'p', null);
    for (const flag of start.filter((a) => a.startsWith('--') && a !== '--' && !a.startsWith('--prompt=') && !a.startsWith('--resume='))) {
      t.ok(resume.includes(flag), `${adapter.name} resume keeps ${flag}`);
    }
    t.ok(resume.includes('--yolo'), `${adapter.name} resume has --yolo`);
  }
  t.ok(iflow.resumeArgs('s', 'p', null).includes('--thinking'), 'iflow resume has --thinking');
});

t.test('gemini and iflow prompts that look like options stay inside one --prompt= element', async (t) => {
  for (const adapter of [gemini, iflow]) {
    for (const prompt of TRICKY_PROMPTS) {
      for (const argv of [adapter.startArgs(prompt, null), adapter.resumeArgs('S', prompt, null)]) {
        const last = argv[argv.length - 1];
        t.equal(last, `--prompt=${prompt}`, `${adapter.name} ${JSON.stringify(prompt)}`);
        t.equal(argv.filter((a) => a.startsWith('--prompt')).length, 1, 'one prompt element');
        t.notOk(argv.includes('-p'), 'no bare -p');
        t.notOk(argv.includes(prompt), 'the prompt is never a bare element');
      }
    }
  }
});

t.test('probe settings per engine (PR-1, PR-2)', async (t) => {
  t.same(codex.probe, { helpHint: 'resume', resumeCheckArgs: ['exec', 'resume', '--help'] });
  t.same(gemini.probe, { helpHint: '--resume', resumeCheckArgs: ['--resume', 'probe-session', '--help'] });
  t.same(iflow.probe, { helpHint: '--resume', resumeCheckArgs: ['--resume', 'probe-session', '--help'] });
});

t.test('gemini runs with GEMINI_CLI_NO_RELAUNCH=true so it honours SIGTERM', async (t) => {
  t.equal(gemini.env['GEMINI_CLI_NO_RELAUNCH'], 'true');
});

// ---------------------------------------------------------------------------------------------
// codex parser: NDJSON events, as `codex exec --json` prints them

const CODEX_THREAD = '0199a5b2-6c1e-7d3a-9f00-1234567890ab';
const CODEX_OK = [
  `{"type":"thread.started","thread_id":"${CODEX_THREAD}"}`,
  '{"type":"turn.started"}',
  '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Planning the answer**"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Let me look."}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"ls","aggregated_output":"a\\n","exit_code":0,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done.\\n```json\\n{\\"greeting\\": \\"hi\\", \\"__SKILL_DONE__\\": true}\\n```"}}',
  '{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":0,"output_tokens":80}}',
].join('\n');

t.test('PR-4 codex: thread_id of the first thread.started, messages in order, the last agent_message is final', async (t) => {
  const parser = codex.newParser();
  t.equal(parser.turnEnded, false);
  feed(parser, 'stdout', CODEX_OK);
  t.equal(parser.turnEnded, true, 'turn.completed ends the turn');
  t.same(parser.result(), {
    sessionId: CODEX_THREAD,
    messages: ['Let me look.', 'Done.\n```json\n{"greeting": "hi", "__SKILL_DONE__": true}\n```'],
    engineError: null,
    usage: { input_tokens: 1200, output_tokens: 80, cached_input_tokens: 0, requests: 1 },
    usageSpan: 'session',
  });
});

t.test('PR-4 codex: a second thread.started does not replace the first thread id', async (t) => {
  const parser = codex.newParser();
  feed(parser, 'stdout', `{"type":"thread.started","thread_id":"first-id"}\n{"type":"thread.started","thread_id":"second-id"}`);
  t.equal(parser.result().sessionId, 'first-id');
});

t.test('PR-4 PR-15 codex: no thread.started gives a null session id', async (t) => {
  const parser = codex.newParser();
  feed(parser, 'stdout', CODEX_OK.split('\n').slice(1).join('\n'));
  t.equal(parser.result().sessionId, null);
  t.equal(parser.turnEnded, true);
});

t.test('codex: the turn is not ended before turn.completed', async (t) => {
  const parser = codex.newParser();
  const lines = CODEX_OK.split('\n');
  for (const line of lines.slice(0, -1)) parser.line('stdout', line);
  t.equal(parser.turnEnded, false);
  parser.line('stdout', lines[lines.length - 1] ?? '');
  t.equal(parser.turnEnded, true);
});

t.test('codex: an item.completed of type error is tolerated', async (t) => {
  const parser = codex.newParser();
  feed(
    parser,
    'stdout',
    [
      `{"type":"thread.started","thread_id":"${CODEX_THREAD}"}`,
      '{"type":"turn.started"}',
      '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-x` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}',
      '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"{\\"greeting\\": \\"hi\\"}"}}',
      '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}',
    ].join('\n'),
  );
  t.same(parser.result(), { sessionId: CODEX_THREAD, messages: ['{"greeting": "hi"}'], engineError: null, usage: { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, requests: 1 }, usageSpan: 'session' });
  t.equal(parser.turnEnded, true);
});

t.test('codex: turn.failed ends the turn and sets engineError', async (t) => {
  const parser = codex.newParser();
  feed(
    parser,
    'stdout',
    [`{"type":"thread.started","thread_id":"${CODEX_THREAD}"}`, '{"type":"turn.started"}', '{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}'].join('\n'),
  );
  t.equal(parser.turnEnded, true);
  t.same(parser.result(), { sessionId: CODEX_THREAD, messages: [], engineError: 'stream disconnected before completion', usage: null, usageSpan: 'session' });
});

t.test('codex: turn.failed without a message still sets engineError', async (t) => {
  const parser = codex.newParser();
  parser.line('stdout', '{"type":"turn.failed"}');
  t.equal(parser.result().engineError, 'turn failed');
});

t.test('codex: a top-level error event sets engineError without ending the turn', async (t) => {
  const parser = codex.newParser();
  parser.line('stdout', '{"type":"error","message":"unexpected status 401 Unauthorized"}');
  t.equal(parser.result().engineError, 'unexpected status 401 Unauthorized');
  t.equal(parser.turnEnded, false);
});

t.test('codex: stderr, blank lines, non-JSON and unknown events are ignored', async (t) => {
  const parser = codex.newParser();
  parser.line('stderr', '{"type":"thread.started","thread_id":"from-stderr"}');
  parser.line('stderr', '{"type":"item.completed","item":{"type":"agent_message","text":"from stderr"}}');
  parser.line('stdout', '');
  parser.line('stdout', 'Reading prompt from stdin...');
  parser.line('stdout', '[1, 2]');
  parser.line('stdout', '{"type":"item.started","item":{"id":"item_0","type":"agent_message","text":"partial"}}');
  parser.line('stdout', '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":42}}');
  t.same(parser.result(), { sessionId: null, messages: [], engineError: null, usage: null, usageSpan: 'session' });
  t.equal(parser.turnEnded, false);
});

t.test('codex: result() returns a copy that later lines do not change', async (t) => {
  const parser = codex.newParser();
  parser.line('stdout', '{"type":"item.completed","item":{"type":"agent_message","text":"one"}}');
  const first = parser.result();
  parser.line('stdout', '{"type":"item.completed","item":{"type":"agent_message","text":"two"}}');
  t.same(first.messages, ['one']);
  t.same(parser.result().messages, ['one', 'two']);
});

t.test('codex: a thread id that could be read as an option is not kept as the session id', async (t) => {
  for (const id of ['--help', '-x', '', ' 0199a5b2', 'a b', 'x'.repeat(129), '../escape', 'id\nnext']) {
    const parser = codex.newParser();
    parser.line('stdout', JSON.stringify({ type: 'thread.started', thread_id: id }));
    t.equal(parser.result().sessionId, null, JSON.stringify(id));
  }
});

// ---------------------------------------------------------------------------------------------
// gemini parser: one pretty-printed JSON document on stdout

const GEMINI_SESSION = '6f1c2a8e-2b7d-4c1e-9a55-0d3e4f5a6b7c';
const GEMINI_DOC = `{
  "session_id": "${GEMINI_SESSION}",
  "response": "Done.\\n\`\`\`json\\n{\\"greeting\\": \\"hi\\", \\"__SKILL_DONE__\\": true}\\n\`\`\`",
  "stats": {
    "models": {
      "gemini-2.5-pro": {
        "api": {
          "totalRequests": 1,
          "totalErrors": 0,
          "totalLatencyMs": 1200
        },
        "tokens": {
          "prompt": 900,
          "candidates": 60,
          "total": 960
        }
      }
    },
    "tools": {
      "totalCalls": 0
    },
    "files": {
      "totalLinesAdded": 0,
      "totalLinesRemoved": 0
    }
  }
}`;

t.test('PR-5 gemini: session_id and response from the pretty-printed document, fed line by line', async (t) => {
  const parser = gemini.newParser();
  const lines = GEMINI_DOC.split('\n');
  for (const line of lines.slice(0, -1)) {
    parser.line('stdout', line);
    t.equal(parser.turnEnded, false, `not ended after ${JSON.stringify(line)}`);
  }
  parser.line('stdout', lines[lines.length - 1] ?? '');
  t.equal(parser.turnEnded, true, 'ended once the document is complete');
  t.same(parser.result(), {
    sessionId: GEMINI_SESSION,
    messages: ['Done.\n```json\n{"greeting": "hi", "__SKILL_DONE__": true}\n```'],
    engineError: null,
    usage: { input_tokens: 900, output_tokens: 60, cached_input_tokens: 0, requests: 1 },
    usageSpan: 'turn',
  });
});

t.test('PR-5 gemini: notices printed before the document are ignored', async (t) => {
  const parser = gemini.newParser();
  feed(parser, 'stdout', `Loaded cached credentials.\n\n[WARN] Skipping unreadable directory: /root/.cache\n${GEMINI_DOC}\n`);
  t.equal(parser.turnEnded, true);
  t.equal(parser.result().sessionId, GEMINI_SESSION);
  t.equal(parser.result().messages.length, 1);
});

t.test('gemini: stderr output is ignored, and so is anything after the document', async (t) => {
  const parser = gemini.newParser();
  parser.line('stderr', '{"session_id": "from-stderr", "response": "no"}');
  t.equal(parser.turnEnded, false);
  feed(parser, 'stdout', GEMINI_DOC);
  parser.line('stdout', '{"session_id": "later", "response": "later"}');
  t.equal(parser.result().sessionId, GEMINI_SESSION);
});

t.test('PR-5 PR-16 gemini: a document without session_id gives a null session id', async (t) => {
  const parser = gemini.newParser();
  feed(parser, 'stdout', JSON.stringify({ response: '{"greeting": "hi"}', stats: { tools: { totalCalls: 0 } } }, null, 2));
  t.equal(parser.turnEnded, true);
  t.same(parser.result(), { sessionId: null, messages: ['{"greeting": "hi"}'], engineError: null, usage: null, usageSpan: 'turn' });
});

t.test('gemini: an empty session_id counts as none', async (t) => {
  const parser = gemini.newParser();
  feed(parser, 'stdout', JSON.stringify({ session_id: '', response: 'x' }, null, 2));
  t.equal(parser.result().sessionId, null);
});

t.test('gemini: a session_id that starts with a dash counts as none', async (t) => {
  const parser = gemini.newParser();
  feed(parser, 'stdout', JSON.stringify({ session_id: '--resume', response: 'x' }, null, 2));
  t.equal(parser.result().sessionId, null);
});

t.test('gemini: an error document sets engineError', async (t) => {
  const parser = gemini.newParser();
  feed(parser, 'stdout', JSON.stringify({ session_id: GEMINI_SESSION, error: { type: 'Error', message: 'Quota exceeded', code: 429 } }, null, 2));
  t.same(parser.result(), { sessionId: GEMINI_SESSION, messages: [], engineError: 'Quota exceeded', usage: null, usageSpan: 'turn' });
});

t.test('gemini: no document (killed mid-turn) gives an empty, unended turn', async (t) => {
  const parser = gemini.newParser();
  feed(parser, 'stdout', GEMINI_DOC.split('\n').slice(0, 5).join('\n'));
  t.equal(parser.turnEnded, false);
  t.same(parser.result(), { sessionId: null, messages: [], engineError: null, usage: null, usageSpan: 'turn' });
});

// ---------------------------------------------------------------------------------------------
// iflow parser: the answer as text, then an <Execution Info> block

const IFLOW_SESSION = 'session-0123456789abcdef0123456789abcdef';
const IFLOW_INFO = `<Execution Info>
{
  "session-id": "${IFLOW_SESSION}",
  "conversation-id": "0e8f7a6b-5c4d-4e3f-8a2b-1c0d9e8f7a6b",
  "assistantRounds": 1,
  "executionTimeMs": 1500,
  "tokenUsage": {
    "input": 900,
    "output": 60,
    "total": 960
  }
}
</Execution Info>`;
const IFLOW_USAGE = { input_tokens: 900, output_tokens: 60, cached_input_tokens: 0, requests: 1 };
const IFLOW_MESSAGE = 'Done.\n```json\n{"greeting": "hi", "__SKILL_DONE__": true}\n```';

t.test('PR-6 iflow: session-id from <Execution Info> on stderr; stdout text is the message', async (t) => {
  const parser = iflow.newParser();
  feed(parser, 'stdout', `${IFLOW_MESSAGE}\n`);
  t.equal(parser.turnEnded, false, 'not ended before the info block');
  const info = IFLOW_INFO.split('\n');
  for (const line of info.slice(0, -1)) parser.line('stderr', line);
  t.equal(parser.turnEnded, false, 'not ended before </Execution Info>');
  parser.line('stderr', info[info.length - 1] ?? '');
  t.equal(parser.turnEnded, true);
  t.same(parser.result(), { sessionId: IFLOW_SESSION, messages: [IFLOW_MESSAGE], engineError: null, usage: IFLOW_USAGE, usageSpan: 'turn' });
});

t.test('PR-6 iflow: session-id from <Execution Info> on stdout; the block is not part of the message', async (t) => {
  const parser = iflow.newParser();
  feed(parser, 'stdout', `${IFLOW_MESSAGE}\n${IFLOW_INFO}\n`);
  t.equal(parser.turnEnded, true);
  const result = parser.result();
  t.same(result, { sessionId: IFLOW_SESSION, messages: [IFLOW_MESSAGE], engineError: null, usage: IFLOW_USAGE, usageSpan: 'turn' });
  t.notMatch(result.messages[0] ?? '', /Execution Info|session-id|tokenUsage/);
});

t.test('iflow: a block on one line and text before it on the same line', async (t) => {
  const parser = iflow.newParser();
  parser.line('stdout', `Answer text<Execution Info>{"session-id": "${IFLOW_SESSION}"}</Execution Info>`);
  t.equal(parser.turnEnded, true);
  t.same(parser.result(), { sessionId: IFLOW_SESSION, messages: ['Answer text'], engineError: null, usage: null, usageSpan: 'turn' });
});

t.test('PR-6 PR-17 iflow: an info block without session-id gives a null session id', async (t) => {
  const parser = iflow.newParser();
  feed(parser, 'stdout', 'Which city should I use?\n');
  feed(parser, 'stderr', '<Execution Info>\n{\n  "conversation-id": "c-1",\n  "assistantRounds": 1\n}\n</Execution Info>\n');
  t.equal(parser.turnEnded, true);
  t.same(parser.result(), { sessionId: null, messages: ['Which city should I use?'], engineError: null, usage: null, usageSpan: 'turn' });
});

t.test('iflow: no info block at all gives a null session id and an unended turn', async (t) => {
  const parser = iflow.newParser();
  feed(parser, 'stdout', 'Just text\n');
  t.equal(parser.turnEnded, false);
  t.same(parser.result(), { sessionId: null, messages: ['Just text'], engineError: null, usage: null, usageSpan: 'turn' });
});

t.test('iflow: other stderr text is never part of the message; empty stdout gives no message', async (t) => {
  const parser = iflow.newParser();
  parser.line('stderr', 'Warning: something on stderr');
  feed(parser, 'stderr', IFLOW_INFO);
  t.same(parser.result(), { sessionId: IFLOW_SESSION, messages: [], engineError: null, usage: IFLOW_USAGE, usageSpan: 'turn' });
});

t.test('iflow: a multi-line answer keeps its inner lines, trimmed at the ends', async (t) => {
  const parser = iflow.newParser();
  feed(parser, 'stdout', '\nLine one\n\nLine two\n\n');
  feed(parser, 'stderr', IFLOW_INFO);
  t.same(parser.result().messages, ['Line one\n\nLine two']);
});

t.test('iflow: a session-id that starts with a dash is not kept', async (t) => {
  const parser = iflow.newParser();
  parser.line('stdout', 'Which city?');
  parser.line('stderr', '<Execution Info>{"session-id": "--yolo"}</Execution Info>');
  t.equal(parser.turnEnded, true);
  t.equal(parser.result().sessionId, null);
});

t.test('sessionIdOf keeps the ids the real CLIs print, at most 128 characters', async (t) => {
  for (const id of [CODEX_THREAD, GEMINI_SESSION, IFLOW_SESSION, 'a', 'x'.repeat(128), 'thread_1.2']) t.equal(sessionIdOf(id), id, id);
  for (const id of [null, 42, {}, '-', '-abc', '.hidden', '_x', 'x'.repeat(129), 'a/b', 'a=b', 'a b', 'a\n']) t.equal(sessionIdOf(id), null, JSON.stringify(id));
});
