import t from 'tap';
import { DONE_MARKER_KEY, hasDoneMarker, stripDoneMarker } from '../../daemon/engines/done-marker.js';

t.test('the marker key is __SKILL_DONE__', async (t) => {
  t.equal(DONE_MARKER_KEY, '__SKILL_DONE__');
});

t.test('D-3.1 detects the plain marker', async (t) => {
  t.equal(hasDoneMarker(['{"greeting": "hi", "__SKILL_DONE__": true}']), true);
  t.equal(hasDoneMarker(['Done.\n```json\n{"__SKILL_DONE__": true}\n```']), true, 'inside a fenced block');
  t.equal(hasDoneMarker(['{"a":1,"__SKILL_DONE__":true}']), true, 'compact JSON');
});

t.test('D-3.1 detects the escaped marker inside an NDJSON string', async (t) => {
  // What a codex NDJSON line holds when the agent message is itself JSON text.
  const ndjson = JSON.stringify({ type: 'item.completed', item: { type: 'agent_message', text: '{"greeting": "hi", "__SKILL_DONE__": true}' } });
  t.ok(ndjson.includes('\\"__SKILL_DONE__\\": true'), 'the line carries the escaped form');
  t.equal(hasDoneMarker([ndjson]), true);
  t.equal(hasDoneMarker(['\\"__SKILL_DONE__\\": true']), true, 'bare escaped form');
  t.equal(hasDoneMarker(['\\\\\\"__SKILL_DONE__\\\\\\": true']), true, 'doubly escaped form');
});

t.test('D-3.1 any whitespace around the colon', async (t) => {
  for (const text of [
    '"__SKILL_DONE__":true',
    '"__SKILL_DONE__" : true',
    '"__SKILL_DONE__"   :   true',
    '"__SKILL_DONE__"\t:\ttrue',
    '"__SKILL_DONE__"\n:\n  true',
    '"__SKILL_DONE__":\r\n true',
    '\\"__SKILL_DONE__\\" :  true',
    '\\"__SKILL_DONE__\\":true',
  ]) {
    t.equal(hasDoneMarker([text]), true, JSON.stringify(text));
  }
});

t.test('D-3.1 the marker may be followed by any JSON delimiter', async (t) => {
  for (const text of ['{"__SKILL_DONE__": true}', '"__SKILL_DONE__": true,', '"__SKILL_DONE__": true\n}', '"__SKILL_DONE__": true]', '"__SKILL_DONE__": true']) {
    t.equal(hasDoneMarker([text]), true, JSON.stringify(text));
  }
});

t.test('D-3.1 false and non-true values are not the marker', async (t) => {
  for (const text of [
    '{"__SKILL_DONE__": false}',
    '{"__SKILL_DONE__": "true"}',
    '{"__SKILL_DONE__": 1}',
    '{"__SKILL_DONE__": null}',
    '{"__SKILL_DONE__": True}',
    '\\"__SKILL_DONE__\\": false',
  ]) {
    t.equal(hasDoneMarker([text]), false, JSON.stringify(text));
  }
});

t.test('D-3.1 suffixes after true are not the marker', async (t) => {
  for (const text of ['"__SKILL_DONE__": true_value', '"__SKILL_DONE__": trueish', '"__SKILL_DONE__": true1', '"__SKILL_DONE__": true$x']) {
    t.equal(hasDoneMarker([text]), false, JSON.stringify(text));
  }
});

t.test('D-3.1 other keys and mentions are not the marker', async (t) => {
  for (const text of [
    'I will emit __SKILL_DONE__ when finished.',
    '{"SKILL_DONE": true}',
    '{"__SKILL_DONE": true}',
    '{"__skill_done__": true}',
    "{'__SKILL_DONE__': true}",
    '{"__SKILL_DONE__x": true}',
    '',
  ]) {
    t.equal(hasDoneMarker([text]), false, JSON.stringify(text));
  }
});

t.test('D-3.1 a marker in any message of the turn counts', async (t) => {
  t.equal(hasDoneMarker(['{"__SKILL_DONE__": true}', 'All done.']), true, 'first of two');
  t.equal(hasDoneMarker(['Working…', 'still working', 'result {"__SKILL_DONE__": true}']), true, 'last of three');
  t.equal(hasDoneMarker(['a', 'b', 'c']), false, 'none of three');
  t.equal(hasDoneMarker([]), false, 'no messages');
});

t.test('D-3 stripDoneMarker removes only the marker key', async (t) => {
  const output = { greeting: 'hi', nested: { __SKILL_DONE__: true }, __SKILL_DONE__: true, count: 2 };
  const stripped = stripDoneMarker(output);
  t.same(stripped, { greeting: 'hi', nested: { __SKILL_DONE__: true }, count: 2 });
  t.notOk(Object.hasOwn(stripped, '__SKILL_DONE__'));
  t.same(Object.keys(stripped), ['greeting', 'nested', 'count'], 'other keys keep their order');
  t.equal(output.__SKILL_DONE__, true, 'the input object is not mutated');
});

t.test('D-3 stripDoneMarker removes the key whatever its value', async (t) => {
  t.same(stripDoneMarker({ a: 1, __SKILL_DONE__: false }), { a: 1 });
  t.same(stripDoneMarker({ __SKILL_DONE__: 'yes' }), {});
});

t.test('D-3 stripDoneMarker without the key returns the same object', async (t) => {
  const output = { greeting: 'hi' };
  t.equal(stripDoneMarker(output), output);
  t.same(stripDoneMarker({}), {});
});

t.test('an engine line of 2 MiB of backslashes (or of spaces after the key) is searched in linear time', async (t) => {
  // The earlier pattern backtracked over every run of backslashes from every start: hours for this line.
  t.equal(hasDoneMarker(['\\'.repeat(2 * 1024 * 1024)]), false);
  t.equal(hasDoneMarker([`"__SKILL_DONE__"${' '.repeat(2 * 1024 * 1024)}`]), false);
  t.equal(hasDoneMarker([`${'\\'.repeat(1024 * 1024)}"__SKILL_DONE__": true`]), true, 'and a marker after them is still found');
});
