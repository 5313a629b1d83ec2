import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/daemon.js';
import { COMPILES_PER_INSTANCE, SCHEMA_CACHE_LIMIT, compileSchema } from '../../daemon/skills/json-schema.js';

/** A distinct schema per n: a required string field named after it. */
function schemaFor(n: number): object {
  return { type: 'object', required: [`f${n}`], properties: { [`f${n}`]: { type: 'string', pattern: `^v${n}` } } };
}

const execFileP = promisify(execFile);

t.test('equal schema texts share one validator; $id is ignored, the draft is not', async (t) => {
  const a = compileSchema({ type: 'object', required: ['x'] });
  t.equal(compileSchema({ type: 'object', required: ['x'] }), a, 'the same text compiles once');
  t.equal(compileSchema({ $id: 'urn:other', type: 'object', required: ['x'] }), a);
  const draft2020 = compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['x'] });
  t.not(draft2020, a);
  t.same(a({ x: 1 }), []);
  t.same(a({}), [{ path: '/', message: "must have required property 'x'" }]);
  t.same(draft2020({}), [{ path: '/', message: "must have required property 'x'" }]);
});

t.test('validators stay correct across compiler instances and cache evictions', async (t) => {
  const first = compileSchema(schemaFor(0));
  const made = [first];
  for (let n = 1; n <= SCHEMA_CACHE_LIMIT + COMPILES_PER_INSTANCE; n += 1) made.push(compileSchema(schemaFor(n)));
  made.forEach((validate, n) => {
    if (validate({ [`f${n}`]: `v${n}-ok` }).length !== 0 || validate({ [`f${n}`]: 'nope' }).length !== 1) t.fail(`validator ${n} is wrong`);
  });
  const again = compileSchema(schemaFor(0));
  t.not(again, first, 'the least recently used validator was evicted and is compiled again');
  t.same(again({ f0: 'nope' }), [{ path: '/f0', message: 'must match pattern "^v0"' }]);
  t.same(first({ f0: 'nope' }), again({ f0: 'nope' }), 'an evicted validator still works for whoever holds it');
});

t.test('compiling many distinct schemas does not grow memory without bound', async (t) => {
  // Measured in a plain child: the test runner's coverage (which it passes on through NODE_OPTIONS)
  // keeps every compiled function alive. Compared with the same compiles on one Ajv instance.
  const plain = ['-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE'];
  const out = await execFileP('env', [...plain, process.execPath, '--expose-gc', join(ROOT, 'test', 'fixtures', 'schema-memory.mjs'), '3000'], { cwd: ROOT });
  const { ours, single } = JSON.parse(out.stdout) as { ours: number; single: number };
  const mib = (bytes: number): string => (bytes / 1048576).toFixed(1);
  t.ok(single > 4 * 1024 * 1024, `one instance keeps what it compiled (${mib(single)} MiB for 3000 schemas)`);
  t.ok(ours < single / 4, `the daemon's compiler grew ${mib(ours)} MiB for the same 3000`);
});

t.test("a skill's pattern runs in linear time: ^(a+)+$ against 100,000 a's and a '!' answers at once", async (t) => {
  // A backtracking engine doubles its work per character here: 31 characters took 15 s.
  const validate = compileSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
  t.same(validate({ s: `${'a'.repeat(100_000)}!` }), [{ path: '/s', message: 'must match pattern "^(a+)+$"' }]);
  t.same(validate({ s: 'aaaa' }), []);
});

t.test('patterns keep JSON Schema (ECMA-262) meaning for what RE2 shares with it; each pattern is its own', async (t) => {
  const validate = compileSchema({
    type: 'object',
    properties: { a: { type: 'string', pattern: '^[a-z]+/x$' }, b: { type: 'string', pattern: '^\\p{L}+$' }, c: { type: 'string', pattern: '\\d{3}' } },
    patternProperties: { '^n_': { type: 'integer' } },
  });
  t.same(validate({ a: 'abc/x', b: 'héllo', c: 'no 123 here', n_1: 2 }), []);
  t.same(validate({ a: 'ABC/x', b: 'h3llo', c: '12', n_1: 'two' }).map((issue) => issue.path), ['/a', '/b', '/c', '/n_1']);
});

t.test('a pattern RE2 cannot run (lookaround, backreferences) makes the schema invalid, with the reason', async (t) => {
  t.throws(() => compileSchema({ type: 'string', pattern: '^(?=a)a$' }), /unsupported Perl syntax/);
  t.throws(() => compileSchema({ type: 'string', pattern: '^(a)\\1$' }), /invalid escape sequence/);
});
