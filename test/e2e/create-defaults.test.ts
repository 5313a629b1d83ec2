// What jobs/create chooses when a request names no engine or no mode (docs/protocol.md,
// "jobs/create"): the configured default_engine where the skill runs on it, else the skill's
// first engine; a skill's only mode. skills/get shows the engine it would choose; skillctl run
// needs no --engine, and reads values from files and standard input.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKILLCTL_BIN, TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';

// A skill whose runner.json lists its engines in an order of its own.
const ownSkills = await mkdtemp(join(tmpdir(), 'create-defaults-'));
t.teardown(() => rm(ownSkills, { recursive: true, force: true }));
await cp(join(TEST_SKILLS, 'codex-only'), join(ownSkills, 'claude-first'), { recursive: true });
const claudeFirst = { id: 'claude-first', version: '1.0.0', name: 'claude-first', description: 'Test skill: its engines in an order of its own.', execution_modes: ['auto'], engines: ['claude', 'gemini'] };
await writeFile(join(ownSkills, 'claude-first', 'assets', 'runner.json'), JSON.stringify(claudeFirst));

const configured = await TestDaemon.start({ config: { default_engine: 'claude' } });
t.teardown(() => configured.cleanup());
const plain = await TestDaemon.start({ skillsDirs: [TEST_SKILLS, ownSkills] });
t.teardown(() => plain.cleanup());

t.test("no engine named: the configured default where the skill runs on it, else the skill's first", async (t) => {
  const client = await configured.client();
  const onDefault = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', input: { emit: { greeting: 'd' } } });
  t.equal(onDefault.engine, 'claude');
  t.equal((await waitForStatus(client, onDefault.job_id)).status, 'succeeded', 'and it runs there');
  const codexOnly = await client.request<JobView>('jobs/create', { skill_id: 'codex-only', input: {} });
  t.equal(codexOnly.engine, 'codex', 'a skill that does not run on the default runs on its first engine');
  await waitForStatus(client, codexOnly.job_id);
  const named = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: {} });
  t.equal(named.engine, 'gemini', 'an engine named is the one used');
  await waitForStatus(client, named.job_id);

  t.match(await client.request('skills/get', { skill_id: 'echo-auto' }), { default_engine: 'claude' });
  t.match(await client.request('skills/get', { skill_id: 'codex-only' }), { default_engine: 'codex' });
  const { skills } = await client.request<{ skills: Array<{ id: string; default_engine: string | null }> }>('skills/list');
  t.equal(skills.find((skill) => skill.id === 'no-gemini')?.default_engine, 'claude');

  const other = await plain.client();
  const first = await other.request<JobView>('jobs/create', { skill_id: 'echo-auto', input: {} });
  t.equal(first.engine, 'codex', 'without default_engine: the skill\'s first engine');
  await waitForStatus(other, first.job_id);
  const listed = await other.request<JobView>('jobs/create', { skill_id: 'claude-first', input: {} });
  t.equal(listed.engine, 'claude', "the first of its runner.json's engines, in that list's order");
  t.match(await other.request('skills/get', { skill_id: 'claude-first' }), { effective_engines: ['gemini', 'claude'], default_engine: 'claude' });
  await waitForStatus(other, listed.job_id);
});

t.test("no mode named: a skill's only mode, else auto", async (t) => {
  const client = await plain.client();
  const only = await client.request<JobView>('jobs/create', { skill_id: 'interactive-only', engine: 'codex', input: { scenario: 'hang' } });
  t.equal(only.execution_mode, 'interactive');
  await client.request('jobs/cancel', { job_id: only.job_id });
  await waitForStatus(client, only.job_id);
  const both = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', input: {} });
  t.equal(both.execution_mode, 'auto');
  await waitForStatus(client, both.job_id);
});

t.test('skillctl run without --engine', async (t) => {
  const env = { ...process.env, SKILLD_SOCKET: configured.socket, NO_COLOR: '1' };
  const run = await runSkillctl(['run', 'echo-auto', '--json', '--wait', '-i', 'emit={"greeting":"cli"}'], env);
  t.equal(run.code, 0, run.stderr);
  const client = await configured.client();
  const { jobs } = await client.request<{ jobs: JobView[] }>('jobs/list', { limit: 1 });
  t.equal(jobs[0]?.engine, 'claude');
  t.match(run.stdout, /"greeting": ?"cli"/);
});

t.test('skillctl run reads a value from a file (k=@path) and the input from standard input (--input-json -)', async (t) => {
  const env = { ...process.env, SKILLD_SOCKET: plain.socket, NO_COLOR: '1' };
  const dir = await mkdtemp(join(tmpdir(), 'run-values-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'note.txt'), 'two\nlines\n');
  const client = await plain.client();

  const fromFile = await runSkillctl(['run', 'echo-auto', '-i', `emit=@${join(dir, 'note.txt')}`], env);
  t.equal(fromFile.code, 0, fromFile.stderr);
  const fileJob = await client.request<JobView & { input: unknown }>('jobs/get', { job_id: fromFile.stdout.trim() });
  t.same(fileJob.input, { emit: 'two\nlines\n' }, "the file's text as it is");
  await waitForStatus(client, fileJob.job_id);

  const piped = spawnSync(process.execPath, [SKILLCTL_BIN, 'run', 'echo-auto', '--input-json', '-', '-i', 'scenario=ok'], { env, input: '{"emit":"from stdin","scenario":"text"}', encoding: 'utf8' });
  t.equal(piped.status, 0, piped.stderr);
  const stdinJob = await client.request<JobView & { input: unknown }>('jobs/get', { job_id: piped.stdout.trim() });
  t.same(stdinJob.input, { emit: 'from stdin', scenario: 'ok' }, '--input fields go on top');
  await waitForStatus(client, stdinJob.job_id);

  const missing = await runSkillctl(['run', 'echo-auto', '-i', `emit=@${join(dir, 'nope.txt')}`], env);
  t.equal(missing.code, 2, 'a file that cannot be read is a usage error');
  t.match(missing.stderr, /--input emit=@.*nope\.txt: cannot read .*nope\.txt: ENOENT/);
});
