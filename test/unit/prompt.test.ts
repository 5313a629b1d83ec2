import t from 'tap';
import { firstTurnPrompt, patchSkillMd, replyPrompt, type FirstTurnPromptInput } from '../../daemon/model/prompt.js';

const ORIGINAL = '# Echo\n\nGreet the user.\n\n\n';
const ARTIFACTS = '/var/lib/skilld/runs/job-123/workspace/artifacts';
const auto = patchSkillMd(ORIGINAL, 'auto', ARTIFACTS);
const interactive = patchSkillMd(ORIGINAL, 'interactive', ARTIFACTS);

t.test('the original SKILL.md comes first, unchanged apart from trailing whitespace', async (t) => {
  for (const text of [auto, interactive]) {
    t.ok(text.startsWith('# Echo\n\nGreet the user.\n\n## Runtime'), 'original text, then the runtime sections');
    t.ok(text.endsWith('\n'), 'ends with a newline');
    t.notOk(text.endsWith('\n\n'), 'exactly one trailing newline');
  }
});

t.test('TP-4 the auto patch forbids asking the user', async (t) => {
  t.match(auto, /Do not ask the user anything/);
  t.match(auto, /do not wait for input/);
  t.notMatch(auto, /<ASK_USER_YAML>/, 'no hint block is offered in auto mode');
});

t.test('TP-5 the interactive patch invites questions and shows the <ASK_USER_YAML> block', async (t) => {
  t.match(interactive, /ask for it: one question per turn/);
  t.match(interactive, /<ASK_USER_YAML>\n[\s\S]*<\/ASK_USER_YAML>/);
  const block = /<ASK_USER_YAML>\n([\s\S]*?)<\/ASK_USER_YAML>/.exec(interactive)?.[1] ?? '';
  for (const key of ['prompt:', 'kind:', 'options:', 'label:', 'value:', 'ui_hints:']) t.ok(block.includes(key), `hint block shows ${key}`);
  t.match(interactive, /hint is optional/);
  t.notMatch(interactive, /Nobody is available/, 'the auto patch is not in interactive mode');
});

t.test('TP-6 both modes redirect artifacts into the given artifacts dir', async (t) => {
  for (const [mode, text] of [['auto', auto], ['interactive', interactive]] as const) {
    t.ok(text.includes(`under \`${ARTIFACTS}\``), `${mode} names ${ARTIFACTS}`);
    t.match(text, /## Runtime: where to write files/, `${mode} has the artifact section`);
  }
  const other = patchSkillMd(ORIGINAL, 'auto', '/tmp/other/artifacts');
  t.ok(other.includes('/tmp/other/artifacts'), 'the dir comes from the argument');
  t.notOk(other.includes(ARTIFACTS));
});

t.test('TP-7 the interactive patch contains no "do not ask" text at all', async (t) => {
  const lower = interactive.toLowerCase();
  for (const phrase of ['do not ask', "don't ask", 'dont ask', 'never ask', 'without asking', 'must not ask', 'not ask']) {
    t.notOk(lower.includes(phrase), `no "${phrase}"`);
  }
  t.ok(auto.toLowerCase().includes('do not ask'), 'the check is able to find the phrase (auto has it)');
});

t.test('the completion contract in both modes mentions "__SKILL_DONE__": true', async (t) => {
  for (const text of [auto, interactive]) {
    t.ok(text.includes('"__SKILL_DONE__": true'), 'marker with its value');
    t.match(text, /## Runtime: how to finish/);
  }
});

t.test('the sections come in order: artifacts, completion, mode', async (t) => {
  for (const text of [auto, interactive]) {
    const a = text.indexOf('## Runtime: where to write files');
    const c = text.indexOf('## Runtime: how to finish');
    const m = Math.max(text.indexOf('## Runtime: unattended run'), text.indexOf('## Runtime: interactive run'));
    t.ok(a > 0 && a < c && c < m, `order ${a} < ${c} < ${m}`);
  }
});

function promptInput(overrides: Partial<FirstTurnPromptInput> = {}): FirstTurnPromptInput {
  return {
    skillId: 'echo-auto',
    skillVersion: '1.0.0',
    skillMdPath: '/state/runs/job-1/skill/SKILL.md',
    template: null,
    input: {},
    parameter: {},
    ...overrides,
  };
}

t.test('firstTurnPrompt names the skill, its version and its patched SKILL.md path', async (t) => {
  const prompt = firstTurnPrompt(promptInput());
  const firstLine = prompt.split('\n')[0] ?? '';
  t.match(firstLine, /"echo-auto"/);
  t.match(firstLine, /1\.0\.0/);
  t.match(firstLine, /\/state\/runs\/job-1\/skill\/SKILL\.md/);
});

t.test('firstTurnPrompt lists each input and parameter on its own line as - name: <JSON>', async (t) => {
  const prompt = firstTurnPrompt(
    promptInput({
      input: { scenario: 'ok', emit: { greeting: 'hi "there"' }, delay_ms: 5, list: [1, 'two'], nothing: null, flag: false, text: 'line\nbreak' },
      parameter: { language: 'fr' },
    }),
  );
  const lines = prompt.split('\n');
  for (const expected of [
    '- scenario: "ok"',
    '- emit: {"greeting":"hi \\"there\\""}',
    '- delay_ms: 5',
    '- list: [1,"two"]',
    '- nothing: null',
    '- flag: false',
    '- text: "line\\nbreak"',
    '- language: "fr"',
  ]) {
    t.ok(lines.includes(expected), `line ${expected}`);
  }
  const inputsAt = lines.indexOf('Inputs:');
  const paramsAt = lines.indexOf('Parameters:');
  t.ok(inputsAt > 0 && paramsAt > inputsAt, 'Inputs: before Parameters:');
  t.ok(lines.indexOf('- scenario: "ok"') > inputsAt && lines.indexOf('- scenario: "ok"') < paramsAt, 'inputs under Inputs:');
  t.ok(lines.indexOf('- language: "fr"') > paramsAt, 'parameters under Parameters:');
  t.equal(lines.filter((l) => l.startsWith('- ')).length, 8, 'one line per value, nothing else starts with "- "');
});

t.test('firstTurnPrompt shows (none) for empty inputs and parameters', async (t) => {
  const lines = firstTurnPrompt(promptInput()).split('\n');
  t.equal(lines[lines.indexOf('Inputs:') + 1], '(none)');
  t.equal(lines[lines.indexOf('Parameters:') + 1], '(none)');
});

t.test('firstTurnPrompt uses the entrypoint template as intro when given', async (t) => {
  const prompt = firstTurnPrompt(promptInput({ template: 'Custom intro for this engine.', input: { a: 1 } }));
  t.ok(prompt.startsWith('Custom intro for this engine.\n'));
  t.ok(prompt.split('\n').includes('- a: 1'), 'values still listed');
});

t.test('replyPrompt sends strings verbatim and JSON for other values', async (t) => {
  t.equal(replyPrompt('Paris'), 'Paris');
  t.equal(replyPrompt('--help me'), '--help me', 'an option-looking reply stays verbatim');
  t.equal(replyPrompt('- yes, go on'), '- yes, go on');
  t.equal(replyPrompt(''), '');
  t.equal(replyPrompt('  spaced\nlines  '), '  spaced\nlines  ');
  t.equal(replyPrompt({ city: 'Paris', n: 2 }), '{"city":"Paris","n":2}');
  t.equal(replyPrompt(['a', 1]), '["a",1]');
  t.equal(replyPrompt(42), '42');
  t.equal(replyPrompt(true), 'true');
  t.equal(replyPrompt(null), 'null');
  const auto = { source: 'auto_decide_timeout', interaction_id: 3, instruction: 'Continue.' };
  t.equal(replyPrompt(auto), JSON.stringify(auto));
});
