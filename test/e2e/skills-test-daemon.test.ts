import t from 'tap';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEngineBins } from '../../clients/skill-test/engine-homes.js';
import { RpcCallError } from '../../rpc/client.js';
import { runSkillctl, type Outcome } from '../helpers/skillctl.js';
import { ROOT, TestDaemon, testPostgres } from '../helpers/daemon.js';

/**
 * `skillctl skills test` with a daemon of the user's running: the cases are test jobs of that
 * daemon (`scripted_model`), its engine the real Codex CLI (a dev dependency) pointed by the
 * daemon at skillctl's scripted model; elsewhere a private daemon, and `jobs/create`'s checks.
 */
const bins = realEngineBins(join(ROOT, 'node_modules'));
t.setTimeout(300_000);
const noCodex = bins.codex === null ? 'the real codex CLI is not installed in node_modules (npm ci installs it as a dev dependency); these tests did NOT run' : false;

const scratch = await mkdtemp(join(tmpdir(), 'skills-test-daemon-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const skills = join(scratch, 'skills');
await mkdir(skills);
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SKILLD_'))), XDG_CONFIG_HOME: join(scratch, 'config') };

function skillctl(...argv: string[]): Promise<Outcome> {
  return runSkillctl(argv, env, { cwd: scratch, timeoutMs: 240_000 });
}

interface Report {
  daemon: string | null;
  kept: string | null;
  passed: number;
  failed: number;
  cases: Array<{ name: string; job_id: string; passed: boolean; status: string }>;
}

/** The scaffolded skill, and a case whose command leaves what its engine's tools see of the environment. */
async function greeter(dir: string): Promise<string> {
  const made = await skillctl('skills', 'new', 'greeter', '--dir', dir);
  if (made.code !== 0) throw new Error(made.stderr);
  const folder = join(dir, 'greeter');
  const env = { name: 'shows its environment', mode: 'auto', input: { text: 'Hi' }, model: [{ run: 'mkdir -p artifacts && env > artifacts/env.txt' }, { final: { result: 'done' } }], expect: { status: 'succeeded', output: { result: 'done' }, artifacts: ['env.txt'] } };
  await writeFile(join(folder, 'tests', 'env.json'), JSON.stringify(env));
  return folder;
}

t.test('with a daemon serving the skill, its cases are test jobs of that daemon, with none of the engine\'s configured variables, removed after', { skip: noCodex }, async (t) => {
  const folder = await greeter(skills);
  // The configured variables a real job gets: a test job must not (keys among them).
  const codex = { command: [bins.codex as string], env: { SKILLD_CONFIGURED_ONLY: 'configured-value' }, sandbox: { read_only: [join(ROOT, 'node_modules')] } };
  const daemon = await TestDaemon.start({ skillsDirs: [skills], config: { engines: { codex } } });
  t.teardown(() => daemon.stop());
  const client = await daemon.client();

  const run = await skillctl('skills', 'test', folder, '--socket', daemon.socket);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /^ok {4}answers unattended {2}\(codex, auto, job-[0-9a-z-]+\)\nok {4}shows its environment {2}\(codex, auto, job-[0-9a-z-]+\)\ngreeter: 2 passed, 0 failed\n$/);
  t.equal(run.stderr, '', 'no note: the daemon took the cases');
  t.same((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs, [], 'the test jobs are removed after the run');

  const kept = await skillctl('skills', 'test', 'greeter', '--socket', daemon.socket, '--json', '--keep', '--case', 'shows its environment');
  t.equal(kept.code, 0, kept.stderr);
  const report = JSON.parse(kept.stdout) as Report;
  t.match(report, { daemon: daemon.socket, kept: null, passed: 1, failed: 0 });
  const jobId = report.cases[0]?.job_id as string;
  const job = await client.request<{ scripted_model: string; owner: { uid: number } }>('jobs/get', { job_id: jobId });
  t.match(job, { scripted_model: /^http:\/\/127\.0\.0\.1:\d+$/, owner: { uid: process.getuid?.() } }, 'a test job, the caller\'s');
  const seen = await readFile(join(daemon.stateDir, 'runs', jobId, 'workspace', 'artifacts', 'env.txt'), 'utf8');
  t.notMatch(seen, 'SKILLD_CONFIGURED_ONLY', "the engine's configured variables are not given to a test job");
  t.match(seen, /^NO_COLOR=1$/m, "the scripted home's variables are");

  // A retry of a test job is a test job: never a call to the real provider.
  const retried = await client.request<{ job_id: string; scripted_model?: string }>('jobs/retry', { job_id: jobId });
  t.equal(retried.scripted_model, job.scripted_model);
  await client.request('jobs/remove', { job_ids: [jobId, retried.job_id], force: true });

  // The same skill in another folder: the daemon does not serve it, so a private daemon does, said on stderr.
  const elsewhere = join(scratch, 'elsewhere', 'greeter');
  await cp(folder, elsewhere, { recursive: true });
  const moved = await skillctl('skills', 'test', elsewhere, '--socket', daemon.socket, '--json', '--case', 'answers unattended');
  t.equal(moved.code, 0, moved.stderr);
  t.match(moved.stderr, `skillctl: the daemon at ${daemon.socket} serves greeter from another folder (${folder}): the cases run on a private daemon`);
  t.match(JSON.parse(moved.stdout), { daemon: null, passed: 1 });
  const asked = await skillctl('skills', 'test', folder, '--socket', daemon.socket, '--private', '--json', '--case', 'answers unattended');
  t.equal(asked.code, 0, asked.stderr);
  t.equal(asked.stderr, '', '--private: a private daemon, nothing to say');
  t.match(JSON.parse(asked.stdout), { daemon: null, passed: 1 });
  t.same((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs, [], 'the daemon ran none of those');
});

t.test("a Codex test job starts from the databases the daemon had Codex make once, and an interactive case resumes its session from them", { skip: noCodex }, async (t) => {
  // The bundled plan-trip, interactive (resumable with Codex: each reply a new process resuming the session), in a folder of this daemon's.
  const served = join(scratch, 'trips');
  await cp(join(ROOT, 'skills', 'plan-trip'), join(served, 'plan-trip'), { recursive: true });
  const codex = { command: [bins.codex as string], sandbox: { read_only: [join(ROOT, 'node_modules')] } };
  const daemon = await TestDaemon.start({ skillsDirs: [served], config: { engines: { codex } } });
  t.teardown(() => daemon.stop());
  const made = (line: string): boolean => line.includes('made the databases test jobs start from');
  // The first test job asks for them, and runs without: it does not wait.
  const first = await skillctl('skills', 'test', 'plan-trip', '--engine', 'codex', '--socket', daemon.socket, '--case', 'asks twice, then plans');
  t.equal(first.code, 0, `${first.stdout}${first.stderr}`);
  await daemon.logged(made);

  const kept = await skillctl('skills', 'test', 'plan-trip', '--engine', 'codex', '--socket', daemon.socket, '--json', '--keep');
  t.equal(kept.code, 0, `${kept.stdout}${kept.stderr}`);
  const report = JSON.parse(kept.stdout) as Report;
  t.match(report, { daemon: daemon.socket, passed: 2, failed: 0 });
  for (const { job_id: jobId } of report.cases) {
    // The job's model home is the daemon's (the engine is shown a home of the job's own in its place): only the copy puts a database there.
    const modelHome = await readdir(join(daemon.stateDir, 'runs', jobId, 'model-home'));
    t.ok(modelHome.some((name) => /^state_\d+\.sqlite$/.test(name)), `${jobId}: the made state database in its model home (${modelHome.join(' ')})`);
    const own = await readdir(join(daemon.stateDir, 'runs', jobId, 'home'));
    t.ok(own.some((name) => /^state_\d+\.sqlite$/.test(name)), `${jobId}: and in the home of its own`);
  }
  t.equal(daemon.logLines.filter(made).length, 1, 'made once for the daemon\'s life');
});

t.test('jobs/create refuses a scripted model it cannot use, and stores nothing', async (t) => {
  const daemon = await TestDaemon.start({ store: 'files' });
  t.teardown(() => daemon.stop());
  const client = await daemon.client();
  const create = (params: Record<string, unknown>): Promise<unknown> => client.request('jobs/create', { skill_id: 'echo-auto', input: { scenario: 'ok' }, ...params });
  const refusal = async (params: Record<string, unknown>): Promise<RpcCallError> => {
    const error = await create(params).then(() => null, (caught: unknown) => caught);
    if (!(error instanceof RpcCallError)) throw new Error(`not refused: ${JSON.stringify(params)}`);
    return error;
  };
  for (const address of ['http://10.0.0.1:80', 'https://127.0.0.1:8080', 'http://127.0.0.1', 'http://127.0.0.1:80/v1', 'http://localhost:80']) {
    t.match(await refusal({ engine: 'codex', scripted_model: address }), { dataCode: 'INVALID_PARAMS', details: { path: '/scripted_model' } }, address);
  }
  t.match(await refusal({ engine: 'codex', scripted_model: 'http://127.0.0.1:70000' }), { dataCode: 'INVALID_PARAMS', message: /port must be 1 to 65535/, details: { field: 'scripted_model' } });
  t.match(await refusal({ engine: 'iflow', scripted_model: 'http://127.0.0.1:8080' }), { dataCode: 'INVALID_PARAMS', message: /iflow cannot be pointed at a scripted model/, details: { field: 'scripted_model' } });
  t.same((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs, [], 'nothing stored');
  const made = await client.request<{ scripted_model: string }>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' }, scripted_model: 'http://127.0.0.1:8080/' });
  t.equal(made.scripted_model, 'http://127.0.0.1:8080', 'kept without its trailing slash');
});

const pg = await testPostgres();
const noPostgres = typeof pg === 'string' ? `no PostgreSQL to run against: ${pg}` : false;

t.test('a daemon whose store is shared refuses test jobs: another host could take one', { skip: noPostgres }, async (t) => {
  const daemon = await TestDaemon.start({ store: 'postgres' });
  t.teardown(() => daemon.stop());
  const client = await daemon.client();
  const error = await client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' }, scripted_model: 'http://127.0.0.1:8080' }).catch((caught: unknown) => caught);
  t.match(error, { dataCode: 'INVALID_PARAMS', message: /the store is shared with other hosts/, details: { field: 'scripted_model' } });
});
