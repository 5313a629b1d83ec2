import t from 'tap';
import { extractOutput } from '../../daemon/jobs/output.js';

t.test('whole-text JSON object', async (t) => {
  t.same(extractOutput('{"greeting": "hi", "n": 2}'), { value: { greeting: 'hi', n: 2 }, repaired: false });
  t.same(extractOutput('\n  {"greeting": "hi"}  \n'), { value: { greeting: 'hi' }, repaired: false }, 'surrounding whitespace');
  t.same(extractOutput('{\n  "nested": {"a": [1, {"b": null}]}\n}'), { value: { nested: { a: [1, { b: null }] } }, repaired: false });
});

t.test('a fenced ```json block inside prose', async (t) => {
  t.same(extractOutput('Done.\n```json\n{"greeting": "hi", "__SKILL_DONE__": true}\n```'), {
    value: { greeting: 'hi', __SKILL_DONE__: true },
    repaired: false,
  });
  t.same(extractOutput('Here:\n```\n{"greeting": "plain fence"}\n```\nBye.'), { value: { greeting: 'plain fence' }, repaired: false }, 'fence without a language');
  t.same(extractOutput('Here:\n```JSON\r\n{"greeting": "crlf"}\r\n```'), { value: { greeting: 'crlf' }, repaired: false }, 'JSON upper case, CRLF');
});

t.test('the last fenced block wins', async (t) => {
  const message = 'Draft:\n```json\n{"greeting": "draft"}\n```\nFinal:\n```json\n{"greeting": "final"}\n```\nThat is all.';
  t.same(extractOutput(message), { value: { greeting: 'final' }, repaired: false });
});

t.test('the last balanced {…} inside prose, with braces inside strings', async (t) => {
  t.same(extractOutput('Result: {"greeting": "hi"} — done.'), { value: { greeting: 'hi' }, repaired: false });
  t.same(extractOutput('First {"greeting": "one"} then {"greeting": "two"} end'), { value: { greeting: 'two' }, repaired: false }, 'the last one');
  t.same(
    extractOutput('Answer: {"text": "a } b { c", "esc": "quote \\" and }", "n": {"m": 1}} ok'),
    { value: { text: 'a } b { c', esc: 'quote " and }', n: { m: 1 } }, repaired: false },
    'braces and escaped quotes inside strings do not end the object',
  );
  t.same(extractOutput("It's done: {\"greeting\": \"it's fine\"}"), { value: { greeting: "it's fine" }, repaired: false }, 'an apostrophe in prose');
});

t.test('no JSON object at all gives null', async (t) => {
  for (const message of ['', 'I could not produce a JSON result.', 'set {x} to 3', '{not json}', '"just a string"', '42', 'null', 'true']) {
    t.equal(extractOutput(message), null, JSON.stringify(message));
  }
});

t.test('arrays are not output', async (t) => {
  for (const message of ['[1, 2, 3]', '["greeting"]', '[]', '```json\n[1, 2]\n```']) {
    t.equal(extractOutput(message), null, JSON.stringify(message));
  }
});

t.test('D-4 an <ASK_USER_YAML> block is never taken as output', async (t) => {
  t.equal(extractOutput('Which city?\n<ASK_USER_YAML>\n{"prompt": "Which city?", "kind": "open_text"}\n</ASK_USER_YAML>'), null, 'JSON-looking hint');
  t.equal(extractOutput('<ASK_USER_YAML>\nprompt: {a: 1}\n</ASK_USER_YAML>'), null, 'YAML flow mapping in the hint');
  t.equal(extractOutput('Question\n<ASK_USER_YAML>\n{"prompt": "unterminated block"'), null, 'unterminated block');
  t.same(
    extractOutput('{"greeting": "hi"}\n<ASK_USER_YAML>\n{"prompt": "later"}\n</ASK_USER_YAML>'),
    { value: { greeting: 'hi' }, repaired: false },
    'the object outside the hint block is found, the hint is not',
  );
});

t.test('D-4 a legacy ask_user envelope is never output', async (t) => {
  for (const message of [
    '{"type": "ask_user", "prompt": "Which city?"}',
    '{"outcome": "ask_user", "interaction": {"prompt": "Which city?"}}',
    '{"ask_user": {"prompt": "Which city?"}}',
    'I must ask:\n```json\n{"type": "ask_user", "prompt": "Which city?"}\n```',
    'Asking {"outcome": "ask_user", "prompt": "Which?"} now',
    '{"type": "ask_user", "prompt": "Which city?",}',
    JSON.stringify(JSON.stringify({ type: 'ask_user', prompt: 'Which city?' })),
  ]) {
    t.equal(extractOutput(message), null, JSON.stringify(message));
  }
});

t.test('an object that merely mentions ask_user is output', async (t) => {
  t.same(extractOutput('{"type": "answer", "ask_user": "no"}'), { value: { type: 'answer', ask_user: 'no' }, repaired: false });
});

t.test('repair: trailing commas set repaired:true', async (t) => {
  t.same(extractOutput('{"greeting": "hi",}'), { value: { greeting: 'hi' }, repaired: true });
  t.same(extractOutput('{"list": [1, 2, ], "o": {"a": 1 ,\n},\n}'), { value: { list: [1, 2], o: { a: 1 } }, repaired: true });
  t.same(extractOutput('Done:\n```json\n{"greeting": "fenced",}\n```'), { value: { greeting: 'fenced' }, repaired: true });
  t.same(extractOutput('Result {"greeting": "prose",} ok'), { value: { greeting: 'prose' }, repaired: true });
});

t.test('repair: a JSON-encoded string holding the object sets repaired:true', async (t) => {
  const encoded = JSON.stringify('{"greeting": "hi", "__SKILL_DONE__": true}');
  t.same(extractOutput(encoded), { value: { greeting: 'hi', __SKILL_DONE__: true }, repaired: true });
  t.equal(extractOutput(JSON.stringify('not an object')), null, 'a string that is not an object');
  t.equal(extractOutput(JSON.stringify('[1,2]')), null, 'a string holding an array');
});

t.test('strict JSON wins over repair anywhere in the message', async (t) => {
  // The whole text needs repair but the fence is strict: the strict candidate is preferred.
  const message = 'Notes {"a": 1,}\n```json\n{"greeting": "strict"}\n```';
  t.same(extractOutput(message), { value: { greeting: 'strict' }, repaired: false });
});

t.test(
  'repair never rewrites the content of string values',
  async (t) => {
    t.same(extractOutput('{"code": "f(a,]", "note": "x, }",}'), { value: { code: 'f(a,]', note: 'x, }' }, repaired: true });
  },
);
