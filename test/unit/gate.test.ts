import t from 'tap';
import { FALLBACK_PROMPT, decideTurn, isUsableInteraction, type TurnEvidence } from '../../daemon/jobs/gate.js';
import type { GateDecision, ProcessOutcome } from '../../daemon/model/gate.js';
import { compileSchema } from '../../daemon/skills/json-schema.js';

// A strict output schema: any key besides `greeting`/`reply` (e.g. the marker) makes it invalid.
const validateOutput = compileSchema({
  type: 'object',
  required: ['greeting'],
  additionalProperties: false,
  properties: { greeting: { type: 'string' }, reply: { type: 'string' } },
});

const OK: ProcessOutcome = { kind: 'ok' };
const VALID = '{"greeting": "hi"}';
const VALID_MARKED = 'Done.\n```json\n{"greeting": "hi", "__SKILL_DONE__": true}\n```';
const INVALID_MARKED = '```json\n{"__SKILL_DONE__": true, "unexpected": 1}\n```';
const HINT = [
  'I need one detail before I continue.',
  '<ASK_USER_YAML>',
  'prompt: Which city should I use?',
  'kind: choose_one',
  'options:',
  '  - label: Paris',
  '    value: paris',
  '  - label: Rome',
  '    value: rome',
  'ui_hints:',
  '  placeholder: a city',
  '</ASK_USER_YAML>',
].join('\n');
const MALFORMED = 'Which city?\n<ASK_USER_YAML>\nprompt: [unclosed\n</ASK_USER_YAML>';

function evidence(overrides: Partial<TurnEvidence> = {}): TurnEvidence {
  return {
    mode: 'interactive',
    process: OK,
    messages: [VALID],
    validateOutput,
    attempt: 1,
    maxAttempt: null,
    sessionId: 'session-1',
    waitNeedsSession: true,
    ...overrides,
  };
}

function errorCode(decision: GateDecision): string | null {
  return decision.status === 'failed' || decision.status === 'canceled' ? decision.error.code : null;
}

/** The decision as one comparable value: status, error code, warnings, and output or pending. */
function summary(decision: GateDecision): Record<string, unknown> {
  const base = { status: decision.status, error: errorCode(decision), warnings: decision.warnings };
  if (decision.status === 'succeeded') return { ...base, output: decision.output };
  if (decision.status === 'waiting_user') return { ...base, interaction_id: decision.pending.interaction_id };
  return base;
}

interface Row {
  name: string;
  evidence: Partial<TurnEvidence>;
  expect: Record<string, unknown>;
}

// The turn gate, every row, both modes.
const ROWS: Row[] = [
  {
    name: 'LC-12 D-2 auto: process ok, output valid, no marker -> succeeded (marker not required)',
    evidence: { mode: 'auto', messages: [VALID] },
    expect: { status: 'succeeded', error: null, warnings: [], output: { greeting: 'hi' } },
  },
  {
    name: 'LC-12 D-2 D-3 auto: valid output with the marker -> succeeded, marker stripped',
    evidence: { mode: 'auto', messages: [VALID_MARKED] },
    expect: { status: 'succeeded', error: null, warnings: [], output: { greeting: 'hi' } },
  },
  {
    name: 'D-2 auto: output breaks the schema -> failed OUTPUT_INVALID',
    evidence: { mode: 'auto', messages: ['{"unexpected": 1}'] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'D-2 auto: no JSON at all -> failed OUTPUT_INVALID',
    evidence: { mode: 'auto', messages: ['I could not produce a JSON result.'] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'D-2 auto: no messages at all -> failed OUTPUT_INVALID',
    evidence: { mode: 'auto', messages: [] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'D-4 auto: a question with a hint is not a result -> failed OUTPUT_INVALID, never waiting',
    evidence: { mode: 'auto', messages: [HINT] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'D-4 auto: a legacy ask_user envelope is not output -> failed OUTPUT_INVALID',
    evidence: { mode: 'auto', messages: ['{"type": "ask_user", "prompt": "Which city?"}'] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'LC-13 interactive: marker and valid output -> succeeded, no warning',
    evidence: { messages: [VALID_MARKED] },
    expect: { status: 'succeeded', error: null, warnings: [], output: { greeting: 'hi' } },
  },
  {
    name: 'LC-14 D-8 interactive: marker and schema-invalid output -> failed OUTPUT_INVALID',
    evidence: { messages: [INVALID_MARKED] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'LC-14 D-8 interactive: marker and unparsable output -> failed OUTPUT_INVALID',
    evidence: { messages: ['{"greeting": "hi", "__SKILL_DONE__": true'] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'LC-14 D-8 interactive: marker in an earlier message, final message without JSON -> failed OUTPUT_INVALID',
    evidence: { messages: ['{"greeting": "hi", "__SKILL_DONE__": true}', 'All done.'] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'LC-14 D-8 interactive: marker + invalid output + a hint still fails, never waits',
    evidence: { messages: [HINT, INVALID_MARKED] },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'LC-14 D-8 interactive: marker + invalid output at max_attempt is OUTPUT_INVALID, not max-attempt',
    evidence: { messages: [INVALID_MARKED], attempt: 3, maxAttempt: 3 },
    expect: { status: 'failed', error: 'OUTPUT_INVALID', warnings: [] },
  },
  {
    name: 'LC-15 API-16 D-7 interactive: no marker, no ask signal, valid output -> succeeded + INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER',
    evidence: { messages: [VALID] },
    expect: { status: 'succeeded', error: null, warnings: ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], output: { greeting: 'hi' } },
  },
  {
    name: 'LC-15 interactive: soft completion wins over max_attempt',
    evidence: { messages: [VALID], attempt: 2, maxAttempt: 2 },
    expect: { status: 'succeeded', error: null, warnings: ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], output: { greeting: 'hi' } },
  },
  {
    name: 'LC-15 interactive: soft completion needs no session id',
    evidence: { messages: [VALID], sessionId: null },
    expect: { status: 'succeeded', error: null, warnings: ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], output: { greeting: 'hi' } },
  },
  {
    name: 'D-4.1 interactive: a well-formed hint plus a valid JSON in the same message -> waiting, not soft-completed',
    evidence: { messages: [`${HINT}\n${VALID}`] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'D-4.1 interactive: a hint in an earlier message, valid JSON in the final one -> waiting',
    evidence: { messages: [HINT, VALID] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'D-4.1 LC-2 interactive: a malformed hint plus a valid JSON -> waiting + ASK_USER_MALFORMED',
    evidence: { messages: [`${MALFORMED}\n${VALID}`] },
    expect: { status: 'waiting_user', error: null, warnings: ['ASK_USER_MALFORMED'], interaction_id: 1 },
  },
  {
    name: 'D-4.1 interactive: a legacy envelope message plus a valid JSON final message -> waiting',
    evidence: { messages: ['{"type": "ask_user", "prompt": "Which city?"}', VALID] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'D-4.1 interactive: an {"outcome":"ask_user"} envelope plus a valid JSON -> waiting',
    evidence: { messages: ['{"outcome": "ask_user", "interaction": {"prompt": "Which city?"}}', VALID] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'D-4.1 interactive: an {"ask_user":{…}} envelope plus a valid JSON -> waiting',
    evidence: { messages: ['{"ask_user": {"prompt": "Which city?"}}', VALID] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'LC-16 API-17 D-7 interactive: no evidence and attempt == max_attempt -> failed INTERACTIVE_MAX_ATTEMPT_EXCEEDED',
    evidence: { messages: ['Which city should I use?'], attempt: 3, maxAttempt: 3 },
    expect: { status: 'failed', error: 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED', warnings: [] },
  },
  {
    name: 'LC-16 interactive: attempt > max_attempt also fails',
    evidence: { messages: ['Which city should I use?'], attempt: 4, maxAttempt: 3 },
    expect: { status: 'failed', error: 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED', warnings: [] },
  },
  {
    name: 'LC-16 interactive: a hint at max_attempt still fails with max-attempt (hints never decide)',
    evidence: { messages: [HINT], attempt: 1, maxAttempt: 1 },
    expect: { status: 'failed', error: 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED', warnings: [] },
  },
  {
    name: 'LC-16 interactive: a malformed hint at max_attempt fails with max-attempt and keeps ASK_USER_MALFORMED',
    evidence: { messages: [MALFORMED], attempt: 2, maxAttempt: 2 },
    expect: { status: 'failed', error: 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED', warnings: ['ASK_USER_MALFORMED'] },
  },
  {
    name: 'LC-16 interactive: attempt below max_attempt waits',
    evidence: { messages: ['Which city should I use?'], attempt: 2, maxAttempt: 3 },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 2 },
  },
  {
    name: 'LC-17 interactive: max_attempt null -> still waiting at attempt 50',
    evidence: { messages: ['Which city should I use?'], attempt: 50, maxAttempt: null },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 50 },
  },
  {
    name: 'LC-1 API-15 D-1 interactive: no marker, no hint, no JSON -> waiting_user',
    evidence: { messages: ['Which city should I use?'] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'LC-1 D-1 interactive: no marker, schema-invalid JSON -> waiting_user, not failed',
    evidence: { messages: ['{"unexpected": 1}'] },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
  {
    name: 'LC-2 D-4 interactive: malformed hint -> waiting_user + ASK_USER_MALFORMED, not failed',
    evidence: { messages: [MALFORMED] },
    expect: { status: 'waiting_user', error: null, warnings: ['ASK_USER_MALFORMED'], interaction_id: 1 },
  },
  {
    name: 'LC-2 interactive: an unterminated hint block counts as a malformed signal when it is not a mapping',
    evidence: { messages: ['Pick one\n<ASK_USER_YAML>\n- just\n- a list'] },
    expect: { status: 'waiting_user', error: null, warnings: ['ASK_USER_MALFORMED'], interaction_id: 1 },
  },
  {
    name: 'LC-13 interactive: marker + valid output + malformed hint -> succeeded; the hint never decides',
    evidence: { messages: [MALFORMED, VALID_MARKED] },
    expect: { status: 'succeeded', error: null, warnings: ['ASK_USER_MALFORMED'], output: { greeting: 'hi' } },
  },
  {
    name: 'LC-13 interactive: marker + valid output + well-formed hint -> succeeded',
    evidence: { messages: [HINT, VALID_MARKED] },
    expect: { status: 'succeeded', error: null, warnings: [], output: { greeting: 'hi' } },
  },
  {
    name: 'PR-15 PR-16 PR-17 interactive resumable: a turn that would wait without a session id -> failed SESSION_RESUME_FAILED',
    evidence: { messages: ['Which city should I use?'], sessionId: null, waitNeedsSession: true },
    expect: { status: 'failed', error: 'SESSION_RESUME_FAILED', warnings: [] },
  },
  {
    name: 'PR-15 interactive resumable: a malformed hint without a session id fails and keeps the warning',
    evidence: { messages: [MALFORMED], sessionId: null, waitNeedsSession: true },
    expect: { status: 'failed', error: 'SESSION_RESUME_FAILED', warnings: ['ASK_USER_MALFORMED'] },
  },
  {
    name: 'LC-5 interactive sticky: waiting needs no session id -> waiting_user',
    evidence: { messages: ['Which city should I use?'], sessionId: null, waitNeedsSession: false },
    expect: { status: 'waiting_user', error: null, warnings: [], interaction_id: 1 },
  },
];

for (const row of ROWS) {
  t.test(row.name, async (t) => {
    t.same(summary(decideTurn(evidence(row.evidence))), row.expect);
  });
}

t.test('process outcomes decide before any output is looked at', async (t) => {
  const canceled = { kind: 'canceled' } as const;
  const failedExit: ProcessOutcome = { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: fatal' };
  for (const mode of ['auto', 'interactive'] as const) {
    for (const messages of [[VALID_MARKED], [VALID], [HINT], ['text'], []]) {
      const c = decideTurn(evidence({ mode, messages, process: canceled }));
      t.same(c, { status: 'canceled', error: { code: 'CANCELED_BY_USER', message: 'canceled by user' }, warnings: [] }, `${mode} canceled with ${JSON.stringify(messages)}`);
      const f = decideTurn(evidence({ mode, messages, process: failedExit }));
      t.same(f, { status: 'failed', error: { code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: fatal' }, warnings: [] }, `${mode} failed exit with ${JSON.stringify(messages)}`);
    }
  }
});

t.test('every failure code of the process passes through unchanged', async (t) => {
  for (const code of ['ENGINE_SPAWN_FAILED', 'ENGINE_EXIT_NONZERO', 'TIMEOUT', 'SESSION_RESUME_FAILED'] as const) {
    const decision = decideTurn(evidence({ process: { kind: 'failed', code, message: `m-${code}` }, messages: [VALID_MARKED], attempt: 9, maxAttempt: 1 }));
    t.same(decision, { status: 'failed', error: { code, message: `m-${code}` }, warnings: [] }, code);
  }
});

t.test('D-3 the marker is stripped before validation in both modes (additionalProperties: false passes)', async (t) => {
  for (const mode of ['auto', 'interactive'] as const) {
    const decision = decideTurn(evidence({ mode, messages: ['{"greeting": "hi", "__SKILL_DONE__": true}'] }));
    t.equal(decision.status, 'succeeded', mode);
    if (decision.status === 'succeeded') {
      t.same(decision.output, { greeting: 'hi' }, `${mode}: output holds only business fields`);
      t.notOk(Object.hasOwn(decision.output, '__SKILL_DONE__'), `${mode}: no marker key`);
    }
  }
});

t.test('D-3.1 an escaped marker (JSON-encoded output) counts as strong evidence', async (t) => {
  const encoded = JSON.stringify('{"greeting": "hi", "__SKILL_DONE__": true}');
  t.ok(encoded.includes('\\"__SKILL_DONE__\\": true'), 'the message carries the escaped form');
  const decision = decideTurn(evidence({ messages: [encoded] }));
  t.same(summary(decision), { status: 'succeeded', error: null, warnings: ['OUTPUT_REPAIRED'], output: { greeting: 'hi' } });
});

t.test('D-3.1 a marker with value false is not evidence: valid output soft-completes', async (t) => {
  const decision = decideTurn(evidence({ messages: ['{"greeting": "hi", "__SKILL_DONE__": false}'] }));
  t.same(summary(decision), { status: 'succeeded', error: null, warnings: ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], output: { greeting: 'hi' } });
});

t.test('OUTPUT_REPAIRED is added when the output needed repair', async (t) => {
  const trailingComma = '{"greeting": "hi", "__SKILL_DONE__": true,}';
  t.same(summary(decideTurn(evidence({ messages: [trailingComma] }))), { status: 'succeeded', error: null, warnings: ['OUTPUT_REPAIRED'], output: { greeting: 'hi' } });
  t.same(summary(decideTurn(evidence({ mode: 'auto', messages: ['{"greeting": "hi",}'] }))), { status: 'succeeded', error: null, warnings: ['OUTPUT_REPAIRED'], output: { greeting: 'hi' } });
  t.same(
    summary(decideTurn(evidence({ messages: ['{"greeting": "hi",}'] }))),
    { status: 'succeeded', error: null, warnings: ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER', 'OUTPUT_REPAIRED'], output: { greeting: 'hi' } },
    'soft completion with repair carries both warnings',
  );
});

t.test('the output is taken from the final message only', async (t) => {
  const decision = decideTurn(evidence({ mode: 'auto', messages: [VALID, 'Done, see above.'] }));
  t.equal(errorCode(decision), 'OUTPUT_INVALID');
  const last = decideTurn(evidence({ mode: 'auto', messages: ['{"greeting": "first"}', '{"greeting": "last"}'] }));
  t.same(summary(last), { status: 'succeeded', error: null, warnings: [], output: { greeting: 'last' } });
});

t.test('OUTPUT_INVALID messages name the schema problem', async (t) => {
  const decision = decideTurn(evidence({ mode: 'auto', messages: ['{"unexpected": 1}'] }));
  t.equal(decision.status, 'failed');
  if (decision.status === 'failed') t.match(decision.error.message, /greeting/);
  const marked = decideTurn(evidence({ messages: [INVALID_MARKED] }));
  if (marked.status === 'failed') t.match(marked.error.message, /done marker present/);
  else t.fail('expected failed');
});

t.test('D-7 the max-attempt failure message names attempt and max_attempt', async (t) => {
  const decision = decideTurn(evidence({ messages: ['Which?'], attempt: 3, maxAttempt: 3 }));
  t.equal(decision.status, 'failed');
  if (decision.status === 'failed') t.match(decision.error.message, /3.*max_attempt 3/);
});

t.test('D-5 pending from a well-formed hint: interaction_id = attempt, prompt, kind, options, ui_hints', async (t) => {
  const decision = decideTurn(evidence({ messages: [HINT], attempt: 7 }));
  t.equal(decision.status, 'waiting_user');
  if (decision.status !== 'waiting_user') return;
  t.same(decision.pending, {
    interaction_id: 7,
    prompt: 'Which city should I use?',
    kind: 'choose_one',
    options: [
      { label: 'Paris', value: 'paris' },
      { label: 'Rome', value: 'rome' },
    ],
    ui_hints: { placeholder: 'a city' },
  });
  t.same(decision.warnings, []);
});

t.test('D-5 a hint without kind gives open_text and no options/ui_hints keys', async (t) => {
  const decision = decideTurn(evidence({ messages: ['<ASK_USER_YAML>\nprompt: Your name?\n</ASK_USER_YAML>'], attempt: 2 }));
  t.equal(decision.status, 'waiting_user');
  if (decision.status !== 'waiting_user') return;
  t.same(decision.pending, { interaction_id: 2, prompt: 'Your name?', kind: 'open_text' });
  t.notOk('options' in decision.pending);
  t.notOk('ui_hints' in decision.pending);
});

t.test('D-5 a hint in an earlier message beats the final message text', async (t) => {
  const decision = decideTurn(evidence({ messages: [HINT, 'Let me know.'] }));
  if (decision.status !== 'waiting_user') return t.fail(`expected waiting_user, got ${decision.status}`);
  t.equal(decision.pending.prompt, 'Which city should I use?');
});

t.test('D-5 without a hint the prompt is the last message, kind open_text', async (t) => {
  const decision = decideTurn(evidence({ messages: ['Earlier thought.', '  Which city should I use?  '], attempt: 4 }));
  if (decision.status !== 'waiting_user') return t.fail(`expected waiting_user, got ${decision.status}`);
  t.same(decision.pending, { interaction_id: 4, prompt: 'Which city should I use?', kind: 'open_text' });
});

t.test('D-5 LC-2 with a malformed hint the prompt is the last message without the hint block', async (t) => {
  const decision = decideTurn(evidence({ messages: [MALFORMED] }));
  if (decision.status !== 'waiting_user') return t.fail(`expected waiting_user, got ${decision.status}`);
  t.same(decision.pending, { interaction_id: 1, prompt: 'Which city?', kind: 'open_text' });
  t.same(decision.warnings, ['ASK_USER_MALFORMED']);
});

t.test('D-5 a hint with options that are not {label, value} is malformed: no options are used', async (t) => {
  const message = 'Pick\n<ASK_USER_YAML>\nprompt: Pick one\nkind: choose_one\noptions: [a, b]\n</ASK_USER_YAML>';
  const decision = decideTurn(evidence({ messages: [message] }));
  if (decision.status !== 'waiting_user') return t.fail(`expected waiting_user, got ${decision.status}`);
  t.same(decision.pending, { interaction_id: 1, prompt: 'Pick', kind: 'open_text' });
  t.same(decision.warnings, ['ASK_USER_MALFORMED']);
});

t.test('D-5 a hint with an empty prompt is malformed and falls back', async (t) => {
  const decision = decideTurn(evidence({ messages: ['<ASK_USER_YAML>\nprompt: "   "\n</ASK_USER_YAML>'] }));
  if (decision.status !== 'waiting_user') return t.fail(`expected waiting_user, got ${decision.status}`);
  t.same(decision.pending, { interaction_id: 1, prompt: FALLBACK_PROMPT, kind: 'open_text' });
  t.same(decision.warnings, ['ASK_USER_MALFORMED']);
});

t.test('D-5 the fallback prompt when there is no message text', async (t) => {
  t.equal(FALLBACK_PROMPT, 'Please provide your next input.');
  for (const messages of [[], [''], ['   \n  '], ['<ASK_USER_YAML>\nprompt: [unclosed\n</ASK_USER_YAML>']]) {
    const decision = decideTurn(evidence({ messages, attempt: 3 }));
    if (decision.status !== 'waiting_user') {
      t.fail(`expected waiting_user for ${JSON.stringify(messages)}, got ${decision.status}`);
      continue;
    }
    t.same(decision.pending, { interaction_id: 3, prompt: 'Please provide your next input.', kind: 'open_text' }, JSON.stringify(messages));
  }
});

t.test('D-5 a legacy envelope provides the pending prompt and kind', async (t) => {
  const decision = decideTurn(evidence({ messages: ['{"type": "ask_user", "interaction": {"prompt": "Proceed?", "kind": "confirm"}}'], attempt: 5 }));
  if (decision.status !== 'waiting_user') return t.fail(`expected waiting_user, got ${decision.status}`);
  t.same(decision.pending, { interaction_id: 5, prompt: 'Proceed?', kind: 'confirm' });
});

// A legacy envelope that is not the whole message (inside a ```json fence, or followed by a draft
// result) is not recognised as an ask_user signal, so the turn is soft-completed (D-4.1).
t.test(
  'D-4.1 a fenced legacy envelope plus a valid JSON in the final message is never soft-completed',
  async (t) => {
    const fenced = 'I need to ask first.\n```json\n{"type": "ask_user", "prompt": "Which city?"}\n```';
    const a = decideTurn(evidence({ messages: [fenced, VALID] }));
    t.equal(a.status, 'waiting_user', 'fenced envelope in an earlier message');
    const b = decideTurn(evidence({ messages: ['{"type": "ask_user", "prompt": "Which city?"}\nDraft:\n```json\n{"greeting": "hi"}\n```'] }));
    t.equal(b.status, 'waiting_user', 'envelope followed by a fenced draft result in one message');
  },
);

t.test('TP-3 an interaction without interaction_id or prompt is a turn error, never waiting_user', async (t) => {
  t.notOk(isUsableInteraction({ prompt: 'Which city?', kind: 'open_text' }), 'no interaction_id');
  t.notOk(isUsableInteraction({ interaction_id: 1, prompt: '   ', kind: 'open_text' }), 'blank prompt');
  t.notOk(isUsableInteraction({ interaction_id: 0, prompt: 'x', kind: 'open_text' }), 'id must be >= 1');
  t.notOk(isUsableInteraction(null));
  t.ok(isUsableInteraction({ interaction_id: 2, prompt: 'Which city?', kind: 'open_text' }));
  const decision = decideTurn({
    mode: 'interactive',
    process: { kind: 'ok' },
    messages: ['Which city?'],
    validateOutput: () => [{ path: '/', message: 'invalid' }],
    attempt: 0,
    maxAttempt: null,
    sessionId: 's',
    waitNeedsSession: true,
  });
  t.match(decision, { status: 'failed', error: { code: 'OUTPUT_INVALID' } }, 'a turn whose interaction cannot be numbered does not wait');
});
