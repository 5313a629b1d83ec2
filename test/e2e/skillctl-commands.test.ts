import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { COMMANDS } from '../../clients/table.js';
import { ROOT, SKILLCTL_BIN, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl, type Outcome } from '../helpers/skillctl.js';
import { hasTool } from '../helpers/tools.js';

/** Who runs the tests: the owner of the jobs they create. */
const ME = userInfo().username;

// One slot, so that a second job waits in the queue and never starts while the first hangs.
const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300, max_concurrent: 1 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();
const scratch = await mkdtemp(join(tmpdir(), 'skillctl-commands-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The built skillctl on the test daemon (through SKILLD_SOCKET, so argv is exactly `args`). */
function ctl(args: string[], env: Record<string, string | undefined> = {}): Promise<Outcome> {
  return runSkillctl(args, { ...process.env, SKILLD_SOCKET: daemon.socket, ...env });
}

/** skillctl with no daemon anywhere it could look. */
function offline(args: string[]): Promise<Outcome> {
  return runSkillctl(args, { ...process.env, SKILLD_SOCKET: join(scratch, 'nothing-here.sock') });
}

async function createJob(input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  return (await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input, ...extra })).job_id;
}

// What the table shows, whatever the load: an age and a duration of any size.
const AGE = '(just now|\\d+s ago|\\d+ min ago|\\d+ h ago)';
const DURATION = '(<1s|\\d+s|\\d+m\\d\\ds|\\d+h\\d\\dm)';

/** The longest common start of two strings. */
function commonStart(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i += 1;
  return a.slice(0, i);
}

t.test('--version and -V print the package version without a daemon', async (t) => {
  for (const flag of ['--version', '-V']) {
    const out = await offline([flag]);
    t.equal(out.code, 0, out.stderr);
    t.equal(out.stdout, `skillctl ${VERSION}\n`);
  }
});

t.test("run --help: every option of run with its description, the global options and an example; help run says the same", async (t) => {
  const out = await offline(['run', '--help']);
  t.equal(out.code, 0, out.stderr);
  const flat = out.stdout.replace(/\s+/g, ' ');
  const run = COMMANDS.find((c) => c.name === 'run');
  t.ok(run);
  for (const [name, spec] of Object.entries(run?.options ?? {})) {
    t.match(out.stdout, new RegExp(`^ {2}(-\\w, | {4})--${name}\\b`, 'm'), `--${name}`);
    t.match(flat, (spec.description ?? '').replace(/\s+/g, ' '), `--${name} described`);
  }
  t.match(flat, 'one of: codex, gemini, iflow, claude');
  t.match(flat, 'one of: auto, interactive');
  t.match(out.stdout, /^options for every command:$/m);
  t.match(out.stdout, /^examples:\n {2}skillctl run \S+ --input text=@/m);
  t.match(flat, 'Interactive runs');
  t.equal((await offline(['help', 'run'])).stdout, out.stdout);
  t.equal((await offline(['run', '-h'])).stdout, out.stdout);
  const unknown = await offline(['help', 'frobnicate']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, 'unknown command "frobnicate"');
});

t.test('a bad option value is exit 2 with the allowed values, before anything is sent', async (t) => {
  const status = await offline(['jobs', '--status', 'bogus']);
  t.equal(status.code, 2);
  t.equal(status.stdout, '');
  t.match(status.stderr, 'skillctl: --status must be one of: queued, running, waiting_user, succeeded, failed, canceled (got "bogus")');
  t.match(status.stderr, /^usage: skillctl jobs /m);
  const mode = await offline(['run', 'echo-auto', '-e', 'codex', '--mode', 'sometimes']);
  t.equal(mode.code, 2);
  t.match(mode.stderr, '--mode must be one of: auto, interactive');
  const engine = await offline(['run', 'echo-auto', '--engine', 'vim']);
  t.equal(engine.code, 2);
  t.match(engine.stderr, '--engine must be one of: codex, gemini, iflow, claude');
  const shell = await offline(['completion', 'tcsh']);
  t.equal(shell.code, 2);
  t.match(shell.stderr, 'must be one of: bash, zsh, fish');
});

t.test('job ids by unique prefix: as given, without job-, ambiguous (exit 2, listed), unknown (exit 1)', async (t) => {
  const a = await createJob({ scenario: 'ok', emit: { greeting: 'first' } });
  const b = await createJob({ scenario: 'ok', emit: { greeting: 'second' } });
  await waitForStatus(client, a);
  await waitForStatus(client, b);
  const show = await ctl(['show', a.slice(0, -1)]);
  t.equal(show.code, 0, show.stderr);
  t.match(show.stdout, new RegExp(`^job_id:\\s+${a}$`, 'm'));
  const bare = await ctl(['show', b.slice('job-'.length, -2), '--json']);
  t.equal(bare.code, 0, bare.stderr);
  t.equal((JSON.parse(bare.stdout) as JobView).job_id, b, 'without the job- start');
  const result = await ctl(['result', b.slice(0, -3)]);
  t.equal(result.code, 0, result.stderr);
  t.same(JSON.parse(result.stdout), { greeting: 'second' });
  const logs = await ctl(['logs', a.slice(4, -1)]);
  t.equal(logs.code, 0, logs.stderr);
  t.match(logs.stdout, /first/);
  const cancel = await ctl(['cancel', a.slice(0, -1)]);
  t.equal(cancel.code, 0, cancel.stderr);
  t.equal(cancel.stdout, `job ${a} had already ended: succeeded\n`);
  const history = await ctl(['history', a.slice(0, -1)]);
  t.equal(history.stdout, `job ${a} has asked no questions\n`);
  const watch = await ctl(['watch', b.slice(0, -1)]);
  t.equal(watch.code, 0, watch.stderr);
  t.match(watch.stdout, new RegExp(`${b} #\\d+ finished succeeded\\n$`));

  const page = await ctl(['jobs', '-q', '--limit', '1', '--before', b.slice(4, -1)]);
  t.equal(page.stdout, `${a}\n`, 'jobs --before takes a short id too');

  const prefix = commonStart(a, b);
  for (const command of [['show'], ['cancel'], ['result'], ['reply', '--', 'yes'], ['logs']]) {
    const [name, ...rest] = command as [string, ...string[]];
    const out = await ctl([name, prefix, ...rest]);
    t.equal(out.code, 2, `${name} with an ambiguous prefix`);
    t.equal(out.stdout, '');
    t.match(out.stderr, `skillctl: job id "${prefix}" is ambiguous: `);
    t.match(out.stderr, new RegExp(`^ {2}${a}\\s+echo-auto\\s+succeeded\\s`, 'm'));
    t.match(out.stderr, new RegExp(`^ {2}${b}\\s+echo-auto\\s+succeeded\\s`, 'm'));
    t.match(out.stderr, new RegExp(`^usage: skillctl ${name} `, 'm'));
  }

  for (const command of [['show'], ['cancel'], ['reply', 'yes'], ['retry'], ['watch']]) {
    const [name, ...rest] = command as [string, ...string[]];
    const out = await ctl([name, 'zzzzzz', ...rest]);
    t.equal(out.code, 1, `${name} with a prefix nothing has`);
    t.match(out.stderr, /^skillctl: JOB_NOT_FOUND: no job "zzzzzz"$/m);
  }
  const whole = await ctl(['show', 'job-zzzzzzzzz-0123456789']);
  t.equal(whole.code, 1, 'a whole id is asked for as it is');
  t.match(whole.stderr, 'JOB_NOT_FOUND: no job "job-zzzzzzzzz-0123456789"');
});

t.test('reply, pending and history take a short id', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  const short = job.job_id.slice(4, -1);
  const pending = await ctl(['pending', short]);
  t.equal(pending.code, 0, pending.stderr);
  t.match(pending.stdout, `job ${job.job_id} is waiting for a reply to interaction 1`);
  const reply = await ctl(['reply', short, '2']);
  t.equal(reply.code, 0, reply.stderr);
  t.match(reply.stdout, `reply accepted; job ${job.job_id} is `);
  await waitForStatus(client, job.job_id);
  t.match((await ctl(['history', short])).stdout, /rome/);
});

t.test("retry runs a finished job's request again as a new job", async (t) => {
  const run = await ctl(['run', 'echo-auto', '-e', 'gemini', '-i', 'scenario=ok', '-i', 'emit={"greeting":"again"}', '-p', 'tone=dry', '--model', 'm1', '--timeout', '77', '--wait', '--json']);
  t.equal(run.code, 0, run.stderr);
  const first = (JSON.parse(run.stdout) as { job_id: string }).job_id;
  const retry = await ctl(['retry', first.slice(0, -1)]);
  t.equal(retry.code, 0, retry.stderr);
  const second = retry.stdout.trim();
  t.match(second, /^job-[0-9a-f]{10}-[0-9a-z]{9}$/);
  t.not(second, first);
  const [old, fresh] = await Promise.all([client.request<JobView>('jobs/get', { job_id: first }), waitForStatus(client, second)]);
  for (const field of ['skill_id', 'engine', 'execution_mode', 'model', 'hard_timeout_sec', 'session_timeout_sec', 'interactive_require_user_reply', 'approvals']) {
    t.same(fresh[field], old[field], field);
  }
  t.equal(fresh.hard_timeout_sec, 77);
  t.equal(fresh.model, 'm1');
  t.equal(fresh.status, 'succeeded');
  const request = (id: string): Promise<unknown> => daemon.storedDoc(id, 'request');
  t.same(await request(second), await request(first), 'the same input, parameter and model');
  t.same((await request(second)) as object, { input: { scenario: 'ok', emit: { greeting: 'again' } }, parameter: { tone: 'dry' }, model: 'm1' });

  const waited = await ctl(['retry', second, '--wait']);
  t.equal(waited.code, 0, waited.stderr);
  t.same(JSON.parse(waited.stdout), { greeting: 'again' });
  t.match(waited.stderr, new RegExp(`^job \\S+ queued \\(retry of ${second}\\)$`, 'm'));
  const json = await ctl(['retry', first, '--json']);
  t.match(JSON.parse(json.stdout), { skill_id: 'echo-auto', engine: 'gemini', status: 'queued' });
  await waitForStatus(client, (JSON.parse(json.stdout) as JobView).job_id);

  const failing = await createJob({ scenario: 'exit1' });
  await waitForStatus(client, failing);
  const again = await ctl(['retry', failing, '-w']);
  t.equal(again.code, 1, 'a retried failure fails again: exit 1 as run --wait');
  t.match(again.stderr, /skillctl: ENGINE_EXIT_NONZERO: /);
});

t.test('retry refuses a job that has not finished with JOB_NOT_FINISHED', async (t) => {
  const hanging = await createJob({ scenario: 'hang' });
  await waitForStatus(client, hanging, ['running']);
  const out = await ctl(['retry', hanging]);
  t.equal(out.code, 1);
  t.match(out.stderr, `skillctl: JOB_NOT_FINISHED: job "${hanging}" is running; only a finished job can be retried`);
  t.match(out.stderr, '"status":"running"');
  await client.request('jobs/cancel', { job_id: hanging });
});

t.test('jobs: CREATED as an age, DURATION from start to end, so far while running, - for a job that never started; -q the ids', async (t) => {
  const running = await createJob({ scenario: 'hang' });
  await waitForStatus(client, running, ['running']);
  const queued = await createJob({ scenario: 'ok' });
  const out = await ctl(['jobs', '--limit', '3']);
  t.equal(out.code, 0, out.stderr);
  const [header, ...rows] = out.stdout.trimEnd().split('\n');
  t.match(header, /^JOB_ID\s+USER\s+SKILL\s+ENGINE\s+MODE\s+STATUS\s+CREATED\s+DURATION\s+ERROR$/);
  t.match(rows[0], new RegExp(`^${queued}\\s+${ME}\\s+echo-auto\\s+codex\\s+auto\\s+queued\\s+${AGE}\\s+-\\s+-$`), 'never started: -');
  t.match(rows[1], new RegExp(`^${running}\\s+${ME}\\s+echo-auto\\s+codex\\s+auto\\s+running\\s+${AGE}\\s+${DURATION}\\s+-$`), 'running: so far');
  const ids = await ctl(['jobs', '-q', '--limit', '2']);
  t.equal(ids.stdout, `${queued}\n${running}\n`);
  await client.request('jobs/cancel', { job_id: queued });
  await client.request('jobs/cancel', { job_id: running });
  const after = await ctl(['jobs', '--limit', '2', '--status', 'canceled']);
  t.match(after.stdout, new RegExp(`^${queued}\\s+${ME}\\s+echo-auto\\s+codex\\s+auto\\s+canceled\\s+${AGE}\\s+-\\s+CANCELED_BY_USER$`, 'm'), 'canceled while queued: never started');
  t.match(after.stdout, new RegExp(`^${running}\\s+${ME}\\s+echo-auto\\s+codex\\s+auto\\s+canceled\\s+${AGE}\\s+${DURATION}\\s+CANCELED_BY_USER$`, 'm'));
  const json = JSON.parse((await ctl(['jobs', '--limit', '1', '--json'])).stdout) as { jobs: JobView[] };
  t.match(json.jobs[0]?.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, '--json keeps the ISO times');
});

t.test('status shows the start with the uptime', async (t) => {
  const out = await ctl(['status']);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, new RegExp(`^started:\\s+\\S+ \\(up ${DURATION}\\)$`, 'm'));
  t.notOk('uptime' in (JSON.parse((await ctl(['status', '--json'])).stdout) as object), '--json is the daemon/status result as it is');
});

t.test('socket prints the path every command would use, and where it came from, without a daemon', async (t) => {
  const clean = { ...process.env, SKILLD_SOCKET: undefined, XDG_RUNTIME_DIR: undefined };
  const flag = await runSkillctl(['socket', '--socket', join(scratch, 'flag.sock')], clean);
  t.equal(flag.code, 0, flag.stderr);
  t.equal(flag.stdout, `${join(scratch, 'flag.sock')}\n`);
  t.equal(flag.stderr, 'from --socket; no socket there now\n');
  const env = await runSkillctl(['socket'], { ...clean, SKILLD_SOCKET: daemon.socket });
  t.equal(env.stdout, `${daemon.socket}\n`);
  t.equal(env.stderr, 'from $SKILLD_SOCKET\n', 'the daemon is there');
  const runtime = await runSkillctl(['socket', '--json'], { ...clean, XDG_RUNTIME_DIR: scratch });
  t.same(JSON.parse(runtime.stdout), { socket: join(scratch, 'skilld', 'skilld.sock'), source: 'runtime_dir', exists: false });
  const fallback = await runSkillctl(['socket', '--json'], clean);
  const uid = process.getuid?.() ?? 0;
  t.match(JSON.parse(fallback.stdout), { socket: `/tmp/skilld-${uid}/skilld.sock`, source: 'fallback' }, 'what the daemon uses without XDG_RUNTIME_DIR');
  const human = await runSkillctl(['socket'], clean);
  t.equal(human.stdout, `/tmp/skilld-${uid}/skilld.sock\n`);
  t.match(human.stderr, 'the per-user default when $XDG_RUNTIME_DIR is unset');
});

t.test('$(skillctl socket) in a shell reaches the daemon, as the README has socat do', { skip: hasTool('socat') ? false : 'socat is not installed (.ci/run installs it)' }, async (t) => {
  const bin = await fakeSkillctlOnPath();
  const out = execFileSync('bash', ['-c', `echo '{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}' | socat -t 30 - UNIX-CONNECT:$(skillctl socket 2>/dev/null)`], {
    env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, SKILLD_SOCKET: daemon.socket },
    encoding: 'utf8',
  });
  t.match(JSON.parse(out), { id: 1, result: { ok: true, version: VERSION } });
});

t.test('completion bash: the script skillctl prints completes commands, choices and job ids from the daemon', async (t) => {
  const out = await offline(['completion', 'bash']);
  t.equal(out.code, 0, out.stderr);
  const script = join(scratch, 'skillctl.bash');
  await writeFile(script, out.stdout);
  const bin = await fakeSkillctlOnPath();
  const complete = (words: string[]): string[] => {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const program = `source '${script}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _skillctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const text = execFileSync('bash', ['--norc', '--noprofile', '-c', program], { env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, SKILLD_SOCKET: daemon.socket }, encoding: 'utf8' });
    return text.split('\n').filter((line) => line !== '').sort();
  };
  t.same(complete(['skillctl', 'ret']), ['retry']);
  t.same(complete(['skillctl', 'jobs', '--status', 'wa']), ['waiting_user']);
  const newest = (JSON.parse((await ctl(['jobs', '--limit', '1', '--json'])).stdout) as { jobs: JobView[] }).jobs[0]?.job_id ?? '';
  t.same(complete(['skillctl', 'show', newest.slice(0, -1)]), [newest], 'job ids from the real daemon, whole when job- is typed');
  t.ok(complete(['skillctl', 'retry', '']).includes(newest.replace(/^job-/, '')), 'else without job-');
  t.same(complete(['skillctl', 'run', 'echo-a']), ['echo-auto'], 'skill ids from the real daemon');
});

/** A folder with a `skillctl` that runs the built one, for shells to find on the PATH. */
async function fakeSkillctlOnPath(): Promise<string> {
  const bin = join(scratch, 'bin');
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, 'skillctl'), `#!/bin/sh\nexec '${process.execPath}' '${SKILLCTL_BIN}' "$@"\n`);
  await chmod(join(bin, 'skillctl'), 0o755);
  return bin;
}

t.test('skills new writes a minimal skill that loads; skills validate checks a folder with the daemon rules, without a daemon', async (t) => {
  const made = await offline(['skills', 'new', 'release-notes', '--dir', scratch]);
  t.equal(made.code, 0, made.stderr);
  const folder = join(scratch, 'release-notes');
  t.equal(made.stdout, `wrote ${folder}: edit SKILL.md, the schemas in assets/ and the cases in tests/, then skillctl skills validate ${folder} and skillctl skills test ${folder}\n`);
  const valid = await offline(['skills', 'validate', folder]);
  t.equal(valid.code, 0, valid.stderr);
  t.equal(valid.stdout, 'release-notes 0.1.0: ok (engines codex, gemini, iflow, claude; modes auto)\n');
  t.equal((await offline(['skills', 'new', 'release-notes', '--dir', scratch])).code, 2, 'never over a folder that exists');
  t.equal((await offline(['skills', 'new', 'Bad Id', '--dir', scratch])).code, 2, 'an id the daemon would not list');

  // What the daemon would refuse, and what it loads with a warning.
  const runner = join(folder, 'assets', 'runner.json');
  const manifest = JSON.parse(await readFile(runner, 'utf8')) as Record<string, unknown>;
  await writeFile(runner, JSON.stringify({ ...manifest, engines: ['claude-code'] }));
  const invalid = await offline(['skills', 'validate', folder, '--json']);
  t.equal(invalid.code, 1);
  t.match(JSON.parse(invalid.stdout), { status: 'invalid', error: { code: 'SKILL_MANIFEST_INVALID', message: /"claude-code" is not an engine.*did you mean "claude"\?$/, path: runner } });
  await writeFile(runner, JSON.stringify({ ...manifest, max_attempts: 2 }));
  const warned = await offline(['skills', 'validate', folder]);
  t.equal(warned.code, 0);
  t.equal(warned.stderr, 'skillctl: warning: runner.json: unknown key "max_attempts", ignored; did you mean "max_attempt"?\n');
  const elsewhere = await offline(['skills', 'validate', join(scratch, 'no-such-skill')]);
  t.equal(elsewhere.code, 1);
  t.match(elsewhere.stderr, /^skillctl: SKILL_MANIFEST_INVALID: /);
});

t.test('a skill with an unknown runner.json key is listed ok, its warning shown by skills and skills show', async (t) => {
  const dir = await mkdtemp(join(scratch, 'skills-'));
  const warned = await TestDaemon.start({ skillsDirs: [dir] });
  t.teardown(() => warned.cleanup());
  const made = await runSkillctl(['skills', 'new', 'noted', '--dir', dir], process.env);
  t.equal(made.code, 0, made.stderr);
  const runner = join(dir, 'noted', 'assets', 'runner.json');
  await writeFile(runner, JSON.stringify({ ...(JSON.parse(await readFile(runner, 'utf8')) as object), max_attempts: 2 }));
  const env = { ...process.env, SKILLD_SOCKET: warned.socket };
  let list: Outcome | null = null;
  for (let i = 0; i < 250 && !(list?.stderr.includes('max_attempts') ?? false); i += 1) {
    list = await runSkillctl(['skills'], env);
    if (!list.stderr.includes('max_attempts')) await new Promise((r) => setTimeout(r, 40));
  }
  t.match(list?.stdout, /^noted +0\.1\.0 +ok /m, 'still ok');
  t.equal(list?.stderr, 'skillctl: warning: noted: runner.json: unknown key "max_attempts", ignored; did you mean "max_attempt"?\n');
  const show = await runSkillctl(['skills', 'show', 'noted'], env);
  t.match(show.stdout, /^warnings: +runner\.json: unknown key "max_attempts", ignored; did you mean "max_attempt"\?$/m);
});
