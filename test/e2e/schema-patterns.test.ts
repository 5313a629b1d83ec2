// A skill's schema cannot freeze the daemon: patterns are matched in linear time.
import t from 'tap';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcCallError } from '../../rpc/client.js';
import { TEST_SKILLS, TestDaemon } from '../helpers/daemon.js';

const skillsDir = await mkdtemp(join(tmpdir(), 'skilld-patterns-'));
t.teardown(() => rm(skillsDir, { recursive: true, force: true }));

async function skillWithPattern(id: string, pattern: string): Promise<void> {
  const dir = join(skillsDir, id);
  await cp(join(TEST_SKILLS, 'echo-auto'), dir, { recursive: true });
  await writeFile(join(dir, 'assets', 'runner.json'), JSON.stringify({ id, version: '1.0.0', name: id, execution_modes: ['auto'] }));
  await writeFile(join(dir, 'assets', 'input.schema.json'), JSON.stringify({ type: 'object', properties: { name: { type: 'string', pattern } } }));
}
await skillWithPattern('catastrophic', '^(a+)+$');
await skillWithPattern('lookahead', '^(?=x)x+$');

const daemon = await TestDaemon.start({ skillsDirs: [skillsDir] });
t.teardown(() => daemon.cleanup());

t.test("a skill's schema can freeze the daemon: ^(a+)+$ against 10,000 a's and a '!' gets INPUT_INVALID, and ping is answered meanwhile", async (t) => {
  const [creator, pinger] = await Promise.all([daemon.client(), daemon.client()]);
  // With a backtracking engine this create would hold the event loop for longer than the universe's age.
  const create = creator.request('jobs/create', { skill_id: 'catastrophic', engine: 'codex', input: { name: `${'a'.repeat(10_000)}!` } }).then(
    () => null,
    (error: unknown) => error,
  );
  const pings = await Promise.all(Array.from({ length: 20 }, () => pinger.request('daemon/ping')));
  t.equal(pings.length, 20, 'every ping answered');
  const error = await create;
  t.ok(error instanceof RpcCallError);
  t.equal((error as RpcCallError).dataCode, 'INPUT_INVALID');
  t.match((error as RpcCallError).message, /must match pattern/);
});

t.test('a pattern RE2 cannot run (lookahead) shows its skill invalid with the reason, instead of running with another meaning', async (t) => {
  const client = await daemon.client();
  const skill = await client.request<{ status: string; error: { code: string; message: string } }>('skills/get', { skill_id: 'lookahead' });
  t.equal(skill.status, 'invalid');
  t.equal(skill.error.code, 'SKILL_SCHEMA_INVALID');
  t.match(skill.error.message, /unsupported Perl syntax/);
});
