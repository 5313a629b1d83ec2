// A sandbox per job (docs/sandbox.md): a hostile engine tries, from inside a job, each read,
// listing, write and signal that reaches beyond its own job, and reports what happened; every
// attempt is refused and its own work succeeds. Then the modes: where the sandbox cannot run
// (bubblewrap missing from the daemon's PATH), `preferred` runs jobs without one and says so,
// `required` refuses them, `off` never tries; and Claude Code as root without a sandbox.
import t from 'tap';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, TEST_SKILLS, TestDaemon, rpcError, waitForStatus, type JobView } from '../helpers/daemon.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';

interface Attempt {
  name: string;
  ok: boolean;
  detail: string;
}
interface Reach {
  attempts: Attempt[];
  work: Attempt[];
}

/**
 * A daemon whose folders are where an operator's would be, apart from each other and not below
 * `/tmp` (which every sandbox replaces anyway): state, socket, config, skills and the daemon
 * user's HOME, with the secrets a home holds.
 */
async function hostDaemon(
  config: (dir: string) => Record<string, unknown> = () => ({}),
  env: Record<string, string> = {},
  prepare: (dir: string) => Promise<void> = async () => undefined,
): Promise<{ daemon: TestDaemon; dir: string }> {
  const dir = await mkdtemp('/var/tmp/skilld-test-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await writeFile(join(home, '.pgpass'), 'db:5432:*:skilld:secret-password\n', { mode: 0o600 });
  await writeFile(join(home, '.bash_history'), 'export API_KEY=secret-key\n');
  await writeFile(join(home, '.ssh', 'id_ed25519'), 'secret private key\n', { mode: 0o600 });
  await cp(TEST_SKILLS, join(dir, 'skills'), { recursive: true });
  await prepare(dir);
  const daemon = await TestDaemon.start({ dir, socket: join(dir, 'run', 'skilld.sock'), skillsDirs: [join(dir, 'skills')], store: 'files', config: { engines: fakeEngines(), ...config(dir) }, env: { HOME: home, ...env } });
  t.teardown(() => daemon.stop());
  return { daemon, dir };
}

/** The fake engines, with `env` for some. */
function fakeEngines(env: Partial<Record<string, Record<string, string>>> = {}): Record<string, unknown> {
  return Object.fromEntries(['codex', 'gemini', 'iflow', 'claude'].map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)], env: env[name] ?? {} }]));
}

/** Runs a job to its end and returns it. */
async function run(daemon: TestDaemon, engine: string, input: Record<string, unknown>): Promise<JobView> {
  const client = await daemon.client();
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input });
  return waitForStatus(client, created.job_id);
}

t.test('a hostile engine reaches nothing beyond its own job, and its own work succeeds', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon((dir) => ({ engines: fakeEngines({ codex: { CODEX_HOME: join(dir, 'codex-home') } }) }));
  // A configured engine home elsewhere: its settings and credentials are for every job, the sessions in it for none.
  const codexHome = join(dir, 'codex-home');
  await mkdir(join(codexHome, 'sessions'), { recursive: true });
  await writeFile(join(codexHome, 'config.toml'), 'model = "configured"\n');
  await writeFile(join(codexHome, 'auth.json'), '{"token":"shared"}\n');
  await writeFile(join(codexHome, 'sessions', 'someone.jsonl'), 'a conversation from before\n');

  // Another job, done, with a file in its workspace and a session in its home.
  const other = await run(daemon, 'codex', { scenario: 'ok' });
  t.equal(other.isolation, 'sandbox', 'jobs run in a sandbox where the probe passes');
  const otherRun = daemon.runDir(other.job_id);
  await writeFile(join(otherRun, 'workspace', 'secret.txt'), 'another job\'s work\n');
  await mkdir(join(otherRun, 'engine-home', 'sessions'), { recursive: true });
  await writeFile(join(otherRun, 'engine-home', 'sessions', 'theirs.jsonl'), 'another job\'s conversation\n');
  const skillMd = join(dir, 'skills', 'echo-auto', 'SKILL.md');
  const skillBefore = await readFile(skillMd, 'utf8');

  const probe = {
    read: {
      "another job's file": join(otherRun, 'workspace', 'secret.txt'),
      "another job's prompt": join(otherRun, 'attempts', '1', 'prompt.txt'),
      "another job's session": join(otherRun, 'engine-home', 'sessions', 'theirs.jsonl'),
      'a session in the configured home': join(codexHome, 'sessions', 'someone.jsonl'),
      "the daemon's state": join(daemon.stateDir, 'state.json'),
      "the daemon's config": join(dir, 'config.json'),
      '~/.pgpass': join(dir, 'home', '.pgpass'),
      'the shell history': join(dir, 'home', '.bash_history'),
      'an SSH key': join(dir, 'home', '.ssh', 'id_ed25519'),
    },
    list: {
      'the runs folder': { folder: join(daemon.stateDir, 'runs'), secrets: [other.job_id] },
      "the daemon user's home": { folder: join(dir, 'home'), secrets: ['.pgpass', '.bash_history', '.ssh'] },
      'the skills folder': { folder: join(dir, 'skills'), secrets: ['echo-auto'] },
    },
    write: {
      "a skills folder's skill": skillMd,
      "another job's workspace": join(otherRun, 'workspace', 'secret.txt'),
    },
    socket: daemon.socket,
    daemon_pid: daemon.child.pid,
    daemon_cmd: ['dist/daemon', 'bin.js'],
  };
  const attempts = Object.keys(probe.read).length + Object.keys(probe.list).length + Object.keys(probe.write).length + 4;
  // Codex's configured home is elsewhere: its settings are read there, its credentials written.
  const readable: Record<string, Record<string, string>> = { codex: { 'its engine\'s settings': join(codexHome, 'config.toml'), 'its engine\'s credentials': join(codexHome, 'auth.json') }, claude: {} };
  for (const engine of ['codex', 'claude']) {
    await t.test(engine, async (t) => {
      const client = await daemon.client();
      const input = { scenario: 'hostile_fs', probe: { ...probe, readable: readable[engine] } };
      const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input });
      const job = await waitForStatus(client, created.job_id);
      t.equal(job.status, 'succeeded', JSON.stringify(job.error));
      t.equal(job.isolation, 'sandbox');
      const { reach } = (await client.request<{ output: { reach: Reach } }>('jobs/result', { job_id: job.job_id })).output;
      t.equal(reach.attempts.length, attempts, 'every attempt was made');
      for (const attempt of reach.attempts) t.notOk(attempt.ok, `refused: ${attempt.name} (${attempt.detail})`);
      for (const work of reach.work) t.ok(work.ok, `its own work: ${work.name} (${work.detail})`);
      const run = daemon.runDir(job.job_id);
      t.equal(await readFile(join(run, 'workspace', 'artifacts', 'own.txt'), 'utf8'), 'own work\n', 'its work is in its workspace');
      t.ok(existsSync(join(run, 'home', '.agent-note')), 'what it wrote in HOME is in its own home');
      t.equal(await readFile(skillMd, 'utf8'), skillBefore, 'the skill is unchanged');
      t.equal(await readFile(join(otherRun, 'workspace', 'secret.txt'), 'utf8'), 'another job\'s work\n', 'the other job\'s file is unchanged');
      t.notOk(existsSync('/tmp/agent-scratch'), 'its /tmp was its own');
    });
  }
  t.ok(existsSync(join(codexHome, 'sessions', 'someone.jsonl')) && !existsSync(join(codexHome, '.agent-note')), 'the configured home holds nothing of the jobs');
});

t.test('an engine installed where its sandboxes cannot see it: the start log says so, and how to fix it', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon((dir) => ({ engines: { ...fakeEngines(), iflow: { command: [join(dir, 'home', 'bin', 'iflow')] } } }), {}, async (dir) => {
    await mkdir(join(dir, 'home', 'bin'), { recursive: true });
    await writeFile(join(dir, 'home', 'bin', 'iflow'), `#!/bin/sh\nexec ${join(FIXTURES, 'fake-iflow.mjs')} "$@"\n`, { mode: 0o755 });
  });
  const line = daemon.logLines.find((l) => l.includes('"engine":"iflow"') && l.includes('hidden_by'));
  t.ok(line !== undefined, 'a warning names the engine');
  t.match(JSON.parse(line ?? '{}'), { level: 40, executable: join(dir, 'home', 'bin', 'iflow'), hidden_by: join(dir, 'home') }, 'with its executable and the folder that hides it');
  t.notOk(daemon.logLines.some((l) => l.includes('"engine":"codex"') && l.includes('hidden_by')), 'and nothing of an engine its sandboxes see');
  const job = await run(daemon, 'iflow', { scenario: 'ok' });
  t.match(job, { status: 'failed', error: { code: 'ENGINE_SPAWN_FAILED', message: `cannot start ${join(dir, 'home', 'bin', 'iflow')}: No such file or directory in the job's sandbox` } }, 'its job fails as one whose engine cannot start');
});

t.test('paths a job\'s input names (input_paths): shown as the skill declares, and checked at create', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon(undefined, {}, async (dir) => {
    // The test skill, declaring two path inputs.
    const assets = join(dir, 'skills', 'echo-auto', 'assets');
    const runner = JSON.parse(await readFile(join(assets, 'runner.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(assets, 'runner.json'), JSON.stringify({ ...runner, input_paths: { source: 'read_only', out: 'read_write' } }));
    const schema = JSON.parse(await readFile(join(assets, 'input.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    await writeFile(join(assets, 'input.schema.json'), JSON.stringify({ ...schema, properties: { ...schema.properties, source: { type: 'string' }, out: { type: 'string' } } }));
    await mkdir(join(dir, 'project'));
    await writeFile(join(dir, 'project', 'README'), 'the project\n');
    await mkdir(join(dir, 'out'));
  });
  const client = await daemon.client();
  const probe = { write: { 'write in the read-only input': join(dir, 'project', 'README') }, readable: { 'read the read-only input': join(dir, 'project', 'README') } };
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hostile_fs', probe, source: join(dir, 'project'), out: join(dir, 'out') } });
  const job = await waitForStatus(client, created.job_id);
  t.equal(job.status, 'succeeded', JSON.stringify(job.error));
  const { reach } = (await client.request<{ output: { reach: Reach } }>('jobs/result', { job_id: job.job_id })).output;
  t.match(reach.attempts.find((a) => a.name === 'write in the read-only input'), { ok: false, detail: 'EROFS' }, 'read-only: not written');
  t.match(reach.work.find((a) => a.name === 'read the read-only input'), { ok: true, detail: 'the project\n' }, 'but read');
  t.equal(await readFile(join(dir, 'project', 'README'), 'utf8'), 'the project\n');

  const refused = async (input: Record<string, unknown>): Promise<string> => {
    const error = await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok', ...input } }));
    t.equal(error.dataCode, 'INPUT_INVALID');
    return error.message;
  };
  t.match(await refused({ source: 'project' }), /input source: must be an absolute path/);
  t.match(await refused({ out: join(dir, 'nowhere') }), /input out: .*nowhere does not exist/);
  t.match(await refused({ source: daemon.stateDir }), /one of the daemon's own places/, 'the state folder');
  t.match(await refused({ source: join(daemon.stateDir, 'runs') }), /one of the daemon's own places/, 'what lies in it');
  t.match(await refused({ source: dir }), /one of the daemon's own places/, 'a folder that holds them');
  t.match(await refused({ out: join(dir, 'home') }), /one of the daemon's own places/, 'the daemon user\'s home as a whole');
  t.match(await refused({ source: join(dir, 'home', '.ssh') }), /one of the daemon's own places/, 'what the home keeps in dot-files');
  t.match(await refused({ source: join(dir, 'skills', 'echo-auto') }), /one of the daemon's own places/, 'a skill');
});

t.test('a job created before sandboxes existed goes on without one, with the home its session is in', async (t) => {
  const dir = await mkdtemp('/var/tmp/skilld-test-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const before = await TestDaemon.start({ dir, store: 'files', config: { sandbox: 'off' } });
  const c1 = await before.client();
  const created = await c1.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(c1, created.job_id, ['waiting_user']);
  await before.stop();
  // The record as a version without sandboxes wrote it: no isolation.
  const statePath = join(before.stateDir, 'state.json');
  const state = JSON.parse(await readFile(statePath, 'utf8')) as { jobs: Record<string, Record<string, unknown>> };
  delete state.jobs[created.job_id]?.['isolation'];
  await writeFile(statePath, JSON.stringify(state));

  const after = await TestDaemon.start({ dir, store: 'files' });
  t.teardown(() => after.stop());
  const c2 = await after.client();
  await c2.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
  const done = await waitForStatus(c2, created.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  t.notOk('isolation' in done, 'it says nothing of a sandbox it never had');
  t.equal((await after.engineCalls(created.job_id)).filter((call) => call.resume).length, 1, 'the session was resumed');
  t.notOk(existsSync(join(after.runDir(created.job_id), 'home')), 'in the engine\'s configured home, where the session is, not one of its own');
});

/** A PATH with node and nothing else: where the daemon looks for bubblewrap and does not find it. */
async function pathWithoutBwrap(): Promise<string> {
  const bin = await mkdtemp('/var/tmp/skilld-test-bin-');
  t.teardown(() => rm(bin, { recursive: true, force: true }));
  await symlink(process.execPath, join(bin, 'node'));
  return bin;
}

interface SandboxView {
  mode: string;
  isolation: string;
  reason: string | null;
}

t.test('preferred, where the sandbox cannot run: jobs run without one, and the daemon says so', async (t) => {
  const { daemon } = await hostDaemon(undefined, { PATH: await pathWithoutBwrap() });
  const client = await daemon.client();
  const { sandbox } = await client.request<{ sandbox: SandboxView }>('daemon/status');
  t.match(sandbox, { mode: 'preferred', isolation: 'none', reason: /^bubblewrap \(bwrap\) could not start a sandbox/ }, 'status says why, in the probe\'s words');
  t.ok(daemon.logLines.some((line) => line.includes('"level":40') && line.includes('the sandbox cannot run here')), 'the start log warns');
  const job = await run(daemon, 'codex', { scenario: 'ok' });
  t.equal(job.status, 'succeeded');
  t.equal(job.isolation, 'none', 'the job says it ran without one');
  if (process.getuid?.() === 0) {
    const refused = await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'claude', input: { scenario: 'ok' } }));
    t.match(refused, { dataCode: 'ENGINE_UNAVAILABLE', message: /Claude Code .* as root outside a sandbox/ }, 'Claude Code as root without a sandbox: refused at create, with the reason');
    t.ok(daemon.logLines.some((line) => line.includes('"engine":"claude"') && line.includes('as root outside a sandbox')), 'and said at start');
  }
});

t.test('required, where the sandbox cannot run: no job starts, with the probe\'s reason', async (t) => {
  const { daemon } = await hostDaemon(() => ({ sandbox: 'required' }), { PATH: await pathWithoutBwrap() });
  const client = await daemon.client();
  t.match((await client.request<{ sandbox: SandboxView }>('daemon/status')).sandbox, { mode: 'required', isolation: 'none' });
  const refused = await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } }));
  t.match(refused, { dataCode: 'SANDBOX_UNAVAILABLE', message: /sandbox is required .* bubblewrap \(bwrap\) could not start a sandbox/ });
  t.same((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs, [], 'nothing was stored');
});

t.test('required where it runs, and off: jobs say how they ran', async (t) => {
  if (NO_SANDBOX === false) {
    const { daemon } = await hostDaemon(() => ({ sandbox: 'required' }));
    t.equal((await run(daemon, 'codex', { scenario: 'ok' })).isolation, 'sandbox');
  }
  const { daemon } = await hostDaemon(() => ({ sandbox: 'off' }));
  t.match((await (await daemon.client()).request<{ sandbox: SandboxView }>('daemon/status')).sandbox, { mode: 'off', isolation: 'none', reason: /sandbox: "off"/ });
  const job = await run(daemon, 'codex', { scenario: 'ok' });
  t.match(job, { status: 'succeeded', isolation: 'none' });
  t.notOk(existsSync(join(daemon.runDir(job.job_id), 'home')), 'no home of its own without a sandbox: the engine\'s configured one, as before');
});
