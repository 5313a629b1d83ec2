// What a job's sandbox shows besides its own folders (docs/sandbox.md): the paths its input
// names, checked at create and again as each engine process opens them; an engine installed
// outside /usr, shown by its installation folder; paths of the config, refused at start when they
// hold the daemon's own places. Then the modes: where the sandbox cannot run (bubblewrap missing
// from the daemon's PATH), `preferred` runs jobs without one and says so, `required` refuses
// them, `off` never tries; Claude Code as root without a sandbox; a job from before sandboxes.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DAEMON_BIN, FIXTURES, TestDaemon, rpcError, waitForStatus, type JobView } from '../helpers/daemon.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { fakeEngines, hostDaemon, reachOf, runJob, widenSchema } from '../helpers/sandbox-host.js';

const ROOT_USER = process.getuid?.() === 0;

t.test('paths a job\'s input names (input_paths): shown as the skill declares, and checked at create', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon({
    prepare: async (dir) => {
      await widenSchema(dir, 'echo-auto', { source: { type: 'string' }, out: { type: 'string' } }, { input_paths: { source: 'read_only', out: 'read_write' } });
      await mkdir(join(dir, 'project'), { mode: 0o755 });
      await writeFile(join(dir, 'project', 'README'), 'the project\n');
      await mkdir(join(dir, 'out'), { mode: 0o777 });
      await chmod(join(dir, 'out'), 0o777);
      await mkdir(join(dir, 'closed'), { mode: 0o700 });
      await mkdir(join(dir, 'read-only-out'), { mode: 0o755 });
    },
  });
  const client = await daemon.client();
  const probe = { write: { 'write in the read-only input': join(dir, 'project', 'README') }, readable: { 'read the read-only input': join(dir, 'project', 'README') } };
  const job = await runJob(daemon, 'codex', { scenario: 'hostile_fs', probe, source: join(dir, 'project'), out: join(dir, 'out') });
  t.equal(job.status, 'succeeded', JSON.stringify(job.error));
  const reach = await reachOf(daemon, job.job_id);
  t.match(reach.attempts.find((a) => a.name === 'write in the read-only input'), { ok: false, detail: /^(EROFS|EACCES)$/ }, 'read-only: not written');
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
  t.match(await refused({ source: join(dir, 'out', 'x'), out: join(dir, 'out') }), /does not exist|inputs may not nest/);
  await mkdir(join(dir, 'out', 'inner'));
  t.match(await refused({ out: join(dir, 'out'), source: join(dir, 'out', 'inner') }), /input (source|out): .* lies in or holds .*: inputs may not nest/, 'a path inside another');
  if (ROOT_USER) {
    t.match(await refused({ source: join(dir, 'closed') }), /input source: .*closed cannot be read by nobody, the user engines run as/, 'a folder the engines\' user cannot read');
    t.match(await refused({ out: join(dir, 'read-only-out') }), /input out: .*read-only-out cannot be written by nobody/, 'nor write, when it is to be written');
  }
});

t.test('an engine installed outside /usr is shown by its installation folder, without what holds it', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon({
    config: (dir) => ({ engines: { ...fakeEngines(), iflow: { command: [join(dir, 'home', 'tools', 'fake-iflow.mjs')] } } }),
    prepare: async (dir) => {
      // A copy of the fakes in a folder of the daemon user's home, readable by all (the engines' user too).
      await cp(FIXTURES, join(dir, 'home', 'tools'), { recursive: true, filter: (source) => !source.includes('/skills') && !source.includes('/transcripts') });
      await chmod(join(dir, 'home'), 0o755);
    },
  });
  const probe = { read: { '~/.pgpass, beside the installation': join(dir, 'home', '.pgpass') }, list: { "the daemon user's home": { folder: join(dir, 'home'), secrets: ['.pgpass', '.ssh', '.bash_history'] } } };
  const job = await runJob(daemon, 'iflow', { scenario: 'hostile_fs', probe });
  t.equal(job.status, 'succeeded', JSON.stringify(job.error));
  const reach = await reachOf(daemon, job.job_id);
  for (const attempt of reach.attempts) t.notOk(attempt.ok, `refused: ${attempt.name} (${attempt.detail})`);
});

t.test('a path of the config that is or holds one of the daemon\'s own places stops start-up, naming the key', async (t) => {
  const dir = await mkdtemp('/var/tmp/skilld-test-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ sandbox: { mode: 'preferred', read_only: [dir] } }));
  const run = spawnSync(process.execPath, [DAEMON_BIN, '--config', join(dir, 'config.json'), '--socket', join(dir, 's.sock'), '--state-dir', join(dir, 'state')], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
  t.not(run.status, 0);
  t.match(run.stderr + run.stdout, /config key "sandbox.read_only" names .*, which is or holds one of the daemon's own places/);
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
  const { daemon } = await hostDaemon({ env: { PATH: await pathWithoutBwrap() } });
  const client = await daemon.client();
  const { sandbox } = await client.request<{ sandbox: SandboxView }>('daemon/status');
  t.match(sandbox, { mode: 'preferred', isolation: 'none', reason: /^bubblewrap \(bwrap\) could not start a sandbox/, user: null }, 'status says why, in the probe\'s words');
  t.ok(daemon.logLines.some((line) => line.includes('"level":40') && line.includes('the sandbox cannot run here')), 'the start log warns');
  const job = await runJob(daemon, 'codex', { scenario: 'ok' });
  t.equal(job.status, 'succeeded');
  t.equal(job.isolation, 'none', 'the job says it ran without one');
  if (ROOT_USER) {
    const refused = await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'claude', input: { scenario: 'ok' } }));
    t.match(refused, { dataCode: 'ENGINE_UNAVAILABLE', message: /Claude Code .* as root outside a sandbox/ }, 'Claude Code as root without a sandbox: refused at create, with the reason');
    t.ok(daemon.logLines.some((line) => line.includes('"engine":"claude"') && line.includes('as root outside a sandbox')), 'and said at start');
  }
});

t.test('required, where the sandbox cannot run: no job starts, with the probe\'s reason', async (t) => {
  const { daemon } = await hostDaemon({ config: () => ({ sandbox: 'required' }), env: { PATH: await pathWithoutBwrap() } });
  const client = await daemon.client();
  t.match((await client.request<{ sandbox: SandboxView }>('daemon/status')).sandbox, { mode: 'required', isolation: 'none' });
  const refused = await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } }));
  t.match(refused, { dataCode: 'SANDBOX_UNAVAILABLE', message: /sandbox is required .* bubblewrap \(bwrap\) could not start a sandbox/ });
  t.same((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs, [], 'nothing was stored');
});

t.test('required where it runs, and off: jobs say how they ran', async (t) => {
  if (NO_SANDBOX === false) {
    const { daemon } = await hostDaemon({ config: () => ({ sandbox: { mode: 'required' } }) });
    t.equal((await runJob(daemon, 'codex', { scenario: 'ok' })).isolation, 'sandbox');
  }
  const { daemon } = await hostDaemon({ config: () => ({ sandbox: 'off' }) });
  t.match((await (await daemon.client()).request<{ sandbox: SandboxView }>('daemon/status')).sandbox, { mode: 'off', isolation: 'none', reason: /sandbox: "off"/ });
  const job = await runJob(daemon, 'codex', { scenario: 'ok' });
  t.match(job, { status: 'succeeded', isolation: 'none' });
  t.notOk(existsSync(join(daemon.runDir(job.job_id), 'home')), 'no home of its own without a sandbox: the engine\'s configured one, as before');
});
