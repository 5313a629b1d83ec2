import t from 'tap';
import { differences, diffLines, type CaseOutcome } from '../../clients/skill-test/case-check.js';
import { CaseFileError, parseCase, type TestCase } from '../../clients/skill-test/case-file.js';
import { CaseModel, replyOf } from '../../clients/skill-test/case-model.js';
import { planCases, SkillTestError } from '../../clients/skill-test/case-plan.js';
import type { ModelRequest } from '../../clients/skill-test/model-request.js';

const CASE = {
  name: 'asks, then answers',
  input: { text: 'Hello' },
  model: [{ run: 'cat SKILL.md' }, { ask: { kind: 'choose_one', prompt: 'Which?', options: [{ label: 'A', value: 'a' }] } }, { final: { result: 'ok' } }],
  replies: ['a'],
  expect: { status: 'succeeded', output: { result: 'ok' } },
};

function parsed(value: unknown, file = 'tests/one.json'): TestCase {
  return parseCase(JSON.stringify(value), file);
}

function problem(value: unknown, file = 'tests/one.json'): string {
  try {
    parseCase(typeof value === 'string' ? value : JSON.stringify(value), file);
  } catch (error) {
    if (error instanceof CaseFileError) return error.message;
    throw error;
  }
  return 'no error';
}

t.test('a case parses with its defaults: no parameters, no mode or engine of its own', async (t) => {
  t.match(parsed(CASE), { file: 'tests/one.json', name: 'asks, then answers', parameters: {}, mode: null, engine: null, replies: ['a'], model: [{ run: 'cat SKILL.md' }, { ask: { kind: 'choose_one', prompt: 'Which?' } }, { final: { result: 'ok' } }] });
  t.match(parseCase('name: in YAML\nmodel:\n  - say: Hello\nexpect:\n  status: failed\n  error_code: OUTPUT_INVALID\n', 'tests/two.yaml'), { name: 'in YAML', input: {}, model: [{ say: 'Hello' }], expect: { status: 'failed', error_code: 'OUTPUT_INVALID' } });
  t.match(parsed({ ...CASE, model: [{ ask: { prompt: 'Why?' } }] }).model, [{ ask: { kind: 'open_text', options: [] } }], 'open_text by default');
});

t.test('a case that is not one: the message names the file and the field', async (t) => {
  t.equal(problem('{', 'tests/bad.json'), 'tests/bad.json: is not valid JSON: ' + (() => { try { JSON.parse('{'); } catch (e) { return (e as Error).message; } return ''; })());
  t.equal(problem([]), 'tests/one.json: the file must hold one object');
  t.equal(problem({ ...CASE, name: '' }), 'tests/one.json: name must be a non-empty string');
  t.equal(problem({ ...CASE, extra: 1 }), 'tests/one.json: extra is not a field (the fields: name, input, parameters, mode, engine, model, replies, expect)');
  t.equal(problem({ ...CASE, model: [] }), 'tests/one.json: model must be a list of turns, at least one');
  t.equal(problem({ ...CASE, model: [{ run: 'ls', say: 'hi' }] }), 'tests/one.json: model[0] must have exactly one of say, run, ask, final (it has run, say)');
  t.equal(problem({ ...CASE, model: [{ think: 'x' }] }), 'tests/one.json: model[0] must have exactly one of say, run, ask, final (it has think)');
  t.equal(problem({ ...CASE, model: [{ run: '' }] }), 'tests/one.json: model[0].run must be a non-empty string');
  t.equal(problem({ ...CASE, model: [{ final: 'done' }] }), 'tests/one.json: model[0].final must be an object: the output');
  t.equal(problem({ ...CASE, model: [{ ask: { kind: 'essay', prompt: 'Why?' } }] }), 'tests/one.json: model[0].ask.kind must be one of open_text, choose_one, confirm');
  t.equal(problem({ ...CASE, model: [{ ask: { kind: 'choose_one', prompt: 'Which?' } }] }), 'tests/one.json: model[0].ask.options must list the choices of a choose_one question');
  t.equal(problem({ ...CASE, model: [{ ask: { prompt: 'Which?', options: [{ label: 'A' }] } }] }), 'tests/one.json: model[0].ask.options[0].value must be a non-empty string');
  t.equal(problem({ ...CASE, mode: 'auto' }), 'tests/one.json: model asks in an auto run, where nobody answers: make the mode interactive');
  t.equal(problem({ ...CASE, mode: 'batch' }), 'tests/one.json: mode must be one of auto, interactive');
  t.equal(problem({ ...CASE, replies: 'a' }), 'tests/one.json: replies must be a list');
  t.equal(problem({ ...CASE, expect: undefined }), 'tests/one.json: expect must be an object with at least status');
  t.equal(problem({ ...CASE, expect: { status: 'done' } }), 'tests/one.json: expect.status must be one of succeeded, failed, waiting_user');
  t.equal(problem({ ...CASE, expect: { status: 'succeeded', artifacts: 'a.txt' } }), 'tests/one.json: expect.artifacts must be a list of file names');
  t.equal(problem({ ...CASE, expect: { status: 'succeeded', outputs: {} } }), 'tests/one.json: expect.outputs is not a field (the fields: status, output, error_code, artifacts)');
  t.equal(problem({ ...CASE, input: [1] }), 'tests/one.json: input must be an object');
});

t.test('each case gets an engine and a mode: --engine, the case, the skill', async (t) => {
  const both = { execution_modes: ['auto', 'interactive'] as const, effective_engines: ['codex', 'gemini', 'iflow', 'claude'] };
  const asks = parsed(CASE);
  const plain = parsed({ ...CASE, model: [{ final: { result: 'ok' } }], replies: [] });
  t.match(planCases([asks, plain], { ...both, execution_modes: [...both.execution_modes] }, null), [{ engine: 'codex', mode: 'interactive' }, { engine: 'codex', mode: 'auto' }]);
  t.match(planCases([plain], { execution_modes: ['interactive'], effective_engines: ['gemini', 'iflow'] }, null), [{ engine: 'gemini', mode: 'interactive' }], "the skill's only mode, its first engine skills test drives");
  t.match(planCases([parsed({ ...CASE, engine: 'claude' })], { ...both, execution_modes: [...both.execution_modes] }, 'gemini'), [{ engine: 'gemini' }], '--engine wins');
  t.throws(() => planCases([plain], { ...both, execution_modes: [...both.execution_modes] }, 'iflow'), new SkillTestError('--engine: skills test does not support iflow: the iFlow CLI has no setting for the address of its model provider, so it cannot be pointed at the scripted model offline (use codex, gemini or claude)', true));
  t.throws(() => planCases([parsed({ ...CASE, engine: 'iflow' })], { ...both, execution_modes: [...both.execution_modes] }, null), /^tests\/one\.json: engine: skills test does not support iflow/);
  t.throws(() => planCases([plain], { execution_modes: ['auto'], effective_engines: ['iflow'] }, null), /the skill runs on iflow only, and skills test does not support iflow/);
  t.throws(() => planCases([plain], { execution_modes: ['auto'], effective_engines: ['codex'] }, 'claude'), /--engine: the skill does not run on claude \(its engines: codex\)/);
  t.throws(() => planCases([asks], { execution_modes: ['auto'], effective_engines: ['codex'] }, null), /model asks in an auto run/);
  t.throws(() => planCases([parsed({ ...CASE, mode: 'interactive' })], { execution_modes: ['auto'], effective_engines: ['codex'] }, null), /mode "interactive" is not one of the skill's \(auto\)/);
});

const OUTCOME: CaseOutcome = { status: 'succeeded', output: { summary: 'Short.', points: ['a', 'b'], meta: { lang: 'en', words: 2 } }, error: null, artifacts: ['report.md'] };

t.test('the expected output is a subset of the job\'s; what differs is listed with both values', async (t) => {
  t.same(differences({ status: 'succeeded', output: { summary: 'Short.', meta: { lang: 'en' } }, artifacts: ['report.md'] }, OUTCOME), [], 'fields not given are not compared');
  t.same(differences({ status: 'succeeded', output: { summary: 'Long.', points: ['a', 'c'], meta: { lang: 'fr', author: 'x' } } }, OUTCOME), [
    { path: 'output.summary', expected: '"Long."', actual: '"Short."' },
    { path: 'output.points[1]', expected: '"c"', actual: '"b"' },
    { path: 'output.meta.lang', expected: '"fr"', actual: '"en"' },
    { path: 'output.meta.author', expected: '"x"', actual: '(missing)' },
  ]);
  t.same(differences({ status: 'succeeded', output: { points: ['a'] } }, OUTCOME), [{ path: 'output.points', expected: '["a"]', actual: '["a","b"]' }], 'arrays of another length differ whole');
  const failed: CaseOutcome = { status: 'failed', output: null, error: { code: 'OUTPUT_INVALID', message: 'no JSON' }, artifacts: [] };
  t.same(differences({ status: 'succeeded', output: { summary: 'Short.' }, artifacts: ['report.md'] }, failed), [
    { path: 'status', expected: 'succeeded', actual: 'failed (OUTPUT_INVALID: no JSON)' },
    { path: 'output', expected: '{"summary":"Short."}', actual: 'null' },
    { path: 'artifacts', expected: 'report.md', actual: '(none)' },
  ]);
  t.same(differences({ status: 'failed', error_code: 'ENGINE_FAILED' }, failed), [{ path: 'error_code', expected: 'ENGINE_FAILED', actual: 'OUTPUT_INVALID' }]);
  t.same(diffLines([{ path: 'output.summary', expected: '"Long."', actual: '"Short."' }]), ['output.summary:', '  - expected "Long."', '  + got      "Short."']);
});

/** A model request whose conversation is the daemon's first prompt, then `after`. */
function request(after: ModelRequest['conversation']): ModelRequest {
  const first = 'Run the skill "demo" (version 1.0.0). Read /state/runs/job-1/skill/SKILL.md and follow its instructions exactly.\n\nInputs:\n- text: "Hello"\n\nParameters:\n(none)';
  const conversation: ModelRequest['conversation'] = [{ role: 'system', text: 'You are an agent.' }, { role: 'user', text: '<environment_context>…</environment_context>' }, { role: 'user', text: first }, ...after];
  return { api: 'responses', method: 'POST', url: '/v1/responses', headers: {}, body: null, model: 'm', stream: true, conversation, userTexts: [], prompt: null, afterToolResult: false };
}

t.test('the scripted model plays the turn counted in the conversation, a resumed one too', async (t) => {
  const model = new CaseModel(parsed(CASE));
  t.same(model.reply(request([])), { toolCall: { command: 'cat SKILL.md' } });
  const asked = model.reply(request([{ role: 'tool_call', name: 'exec_command', args: { cmd: 'cat SKILL.md' } }, { role: 'tool_result', name: 'call_1', output: '# demo' }]));
  t.match(asked, { text: /^Which\?\n\n<ASK_USER_YAML>\nprompt: "Which\?"\nkind: choose_one\noptions:\n {2}- label: "A"\n {4}value: "a"\n<\/ASK_USER_YAML>$/ });
  const resumed = request([{ role: 'tool_call', name: 'exec_command', args: { cmd: 'cat SKILL.md' } }, { role: 'tool_result', name: 'call_1', output: '# demo' }, { role: 'assistant', text: 'Which?' }, { role: 'user', text: 'a' }]);
  t.match(model.reply(resumed), { text: /```json\n\{\n {2}"result": "ok",\n {2}"__SKILL_DONE__": true\n\}\n```$/ });
  t.same(model.overruns, []);
  t.match(model.reply(request([...resumed.conversation.slice(3), { role: 'assistant', text: 'done' }])), { text: /scripts 3 model turns, and this is turn 4/ });
  t.same(model.overruns, [4], 'a turn past the script is told');
  t.match(model.reply({ ...request([]), conversation: [{ role: 'user', text: 'hello' }] }), { text: /no first-turn prompt/ });
  t.same(replyOf({ say: 'Hello' }), { text: 'Hello' });
});
