import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl, type Outcome } from '../helpers/skillctl.js';

/** Who runs the tests: the owner of the jobs they create. */
const ME = userInfo().username;

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function ctl(args: string[], options: { socket?: string | null; env?: Record<string, string | undefined> } = {}): Promise<Outcome> {
  const socket = options.socket === undefined ? daemon.socket : options.socket;
  return runSkillctl([...args, ...(socket === null ? [] : ['--socket', socket])], { ...process.env, SKILLD_SOCKET: undefined, ...options.env });
}

async function createJob(args: string[]): Promise<string> {
  const out = await ctl(['run', 'echo-auto', ...args]);
  if (out.code !== 0) throw new Error(`run failed: ${out.stderr}`);
  return out.stdout.trim();
}

t.test('run --wait on a succeeding job prints the output as JSON and exits 0', async (t) => {
  const out = await ctl(['run', 'echo-auto', '--engine', 'codex', '--input', 'scenario=ok', '--input-json', '{"emit":{"greeting":"hi"}}', '--wait']);
  t.equal(out.code, 0, out.stderr);
  t.same(JSON.parse(out.stdout), { greeting: 'hi' });
});

t.test('run --wait on a failing job exits 1 with the job error code on stderr', async (t) => {
  const out = await ctl(['run', 'echo-auto', '--engine', 'gemini', '--input', 'scenario=exit1', '--wait']);
  t.equal(out.code, 1);
  t.match(out.stderr, /skillctl: ENGINE_EXIT_NONZERO: /);
});

t.test('run --wait --json prints the jobs/result document', async (t) => {
  const ok = await ctl(['run', 'echo-auto', '-e', 'iflow', '-i', 'scenario=ok', '-i', 'emit={"greeting":"json"}', '--wait', '--json']);
  t.equal(ok.code, 0, ok.stderr);
  const result = JSON.parse(ok.stdout) as { status: string; output: unknown; error: unknown };
  t.equal(result.status, 'succeeded');
  t.same(result.output, { greeting: 'json' });
  const failed = await ctl(['run', 'echo-auto', '-e', 'codex', '-i', 'scenario=exit1', '--wait', '--json']);
  t.equal(failed.code, 1);
  t.match(JSON.parse(failed.stdout), { status: 'failed', error: { code: 'ENGINE_EXIT_NONZERO' } });
});

t.test('run without --wait prints the job id; with --json the Job', async (t) => {
  const id = await createJob(['--engine', 'codex', '--input', 'scenario=ok']);
  t.match(id, /^\S+$/);
  const job = await waitForStatus(client, id);
  t.equal(job.status, 'succeeded');
  const out = await ctl(['run', 'echo-auto', '--engine', 'codex', '--input', 'scenario=ok', '--model', 'm1', '--timeout', '60', '--json']);
  const created = JSON.parse(out.stdout) as JobView;
  t.equal(created.skill_id, 'echo-auto');
  t.equal(created.model, 'm1');
  t.equal(created.hard_timeout_sec, 60);
  await waitForStatus(client, created.job_id);
});

t.test('jobs lists the jobs in a table and as JSON', async (t) => {
  const id = await createJob(['--engine', 'gemini', '--input', 'scenario=ok']);
  await waitForStatus(client, id);
  const table = await ctl(['jobs', '--skill', 'echo-auto', '--limit', '5']);
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /^JOB_ID\s+USER\s+SKILL\s+ENGINE\s+MODE\s+STATUS\s+CREATED\s+DURATION\s+ERROR/);
  t.match(table.stdout, new RegExp(`${id}\\s+${ME}\\s+echo-auto\\s+gemini\\s+auto\\s+succeeded\\s+(just now|\\d+s ago|\\d+ min ago)\\s+(<1s|\\d+s|\\d+m\\d\\ds)\\s+-$`, 'm'));
  const listed = JSON.parse((await ctl(['jobs', '--status', 'succeeded', '--json'])).stdout) as { jobs: JobView[] };
  t.ok(listed.jobs.some((job) => job.job_id === id));
  t.ok(listed.jobs.every((job) => job.status === 'succeeded'));
});

t.test('show and result of a finished job', async (t) => {
  const id = await createJob(['--engine', 'codex', '--input', 'scenario=ok', '--input-json', '{"emit":{"greeting":"shown"}}']);
  await waitForStatus(client, id);
  const show = await ctl(['show', id]);
  t.equal(show.code, 0, show.stderr);
  t.match(show.stdout, new RegExp(`^job_id:\\s+${id}$`, 'm'));
  t.match(show.stdout, /^status:\s+succeeded$/m);
  t.equal((JSON.parse((await ctl(['show', id, '--json'])).stdout) as JobView).status, 'succeeded');
  const result = await ctl(['result', id]);
  t.equal(result.code, 0, result.stderr);
  t.same(JSON.parse(result.stdout), { greeting: 'shown' });
});

t.test('cancel stops a hanging job; its result exits 4 while it runs, then 1', async (t) => {
  const id = await createJob(['--engine', 'codex', '--input', 'scenario=hang']);
  await waitForStatus(client, id, ['running']);
  const running = await ctl(['result', id]);
  t.equal(running.code, 4, 'not finished yet is its own exit code');
  t.match(running.stderr, `skillctl: job ${id} is running; no result yet`);
  const cancel = await ctl(['cancel', id]);
  t.equal(cancel.code, 0, cancel.stderr);
  t.match(cancel.stdout, `job ${id} canceled`);
  t.equal((JSON.parse((await ctl(['show', id, '--json'])).stdout) as JobView).status, 'canceled');
  const again = await ctl(['cancel', id, '--json']);
  t.match(JSON.parse(again.stdout), { job_id: id, status: 'canceled', accepted: false });
  const result = await ctl(['result', id]);
  t.equal(result.code, 1);
  t.match(result.stderr, /CANCELED_BY_USER/);
});

t.test('logs prints what the agent said as text; --raw the engine stdout as it came, --stderr its stderr', async (t) => {
  const id = await createJob(['--engine', 'codex', '--input', 'scenario=ok', '--input-json', '{"emit":{"greeting":"in the log"}}']);
  await waitForStatus(client, id);
  const logs = await ctl(['logs', id]);
  t.equal(logs.code, 0, logs.stderr);
  t.equal(logs.stdout, 'Done.\n```json\n{"greeting": "in the log", "__SKILL_DONE__": true}\n```\n', 'the agent message alone, no NDJSON');
  const raw = await ctl(['logs', id, '--raw']);
  t.equal(raw.code, 0, raw.stderr);
  t.match(raw.stdout, /"type":"thread.started"/);
  t.match(raw.stdout, /in the log/);
  const failed = await createJob(['--engine', 'codex', '--input', 'scenario=exit1']);
  await waitForStatus(client, failed);
  t.match((await ctl(['logs', failed, '--stderr', '--attempt', '1'])).stdout, /fatal: engine crashed/);
});

t.test('logs -f follows a running attempt until it ends, as text or raw', async (t) => {
  const id = await createJob(['--engine', 'iflow', '--input', 'scenario=ok', '--input', 'delay_ms=600']);
  const [text, raw] = await Promise.all([ctl(['logs', id, '-f']), ctl(['logs', id, '-f', '--raw'])]);
  t.equal(text.code, 0, text.stderr);
  t.equal(text.stdout, 'Done.\n```json\n{"greeting": "hello", "__SKILL_DONE__": true}\n```\n');
  t.equal(raw.code, 0, raw.stderr);
  t.equal(raw.stdout, text.stdout, 'iFlow prints its answer as plain text: raw and text agree');
  const codex = await createJob(['--engine', 'codex', '--input', 'scenario=ok', '--input', 'delay_ms=600']);
  const [codexText, codexRaw] = await Promise.all([ctl(['logs', codex, '-f']), ctl(['logs', codex, '--follow', '--raw'])]);
  t.match(codexText.stdout, /^Done\.\n```json\n/);
  t.notMatch(codexText.stdout, /"type":/);
  t.match(codexRaw.stdout, /^\{"type":"thread.started"/);
  t.match(codexRaw.stdout, /"type":"turn.completed"/);
});

t.test('watch <job> replays and prints the events, and exits at finished', async (t) => {
  const id = await createJob(['--engine', 'gemini', '--input', 'scenario=ok', '--input', 'delay_ms=300']);
  const watch = await ctl(['watch', id]);
  t.equal(watch.code, 0, watch.stderr);
  const lines = watch.stdout.trim().split('\n');
  t.match(lines[0], new RegExp(`^\\S+Z ${id} #1 status_changed - -> queued$`));
  t.ok(lines.some((line) => / status_changed queued -> running$/.test(line)));
  t.match(lines.at(-1), new RegExp(`${id} #\\d+ finished succeeded$`));
  const raw = await ctl(['watch', id, '--json']);
  const events = raw.stdout.trim().split('\n').map((line) => JSON.parse(line) as { seq: number; type: string });
  t.same(events.map((e) => e.seq), events.map((_, i) => i + 1), 'every event once, in order');
  t.equal(events.at(-1)?.type, 'finished');
});

t.test('status, skills and engines answer in human and JSON form', async (t) => {
  const status = await ctl(['status']);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, /^slots:\s+\d+ of 4 used, \d+ queued$/m);
  t.match(status.stdout, new RegExp(`^state lock:\\s+held \\(${daemon.stateDir}/skilld\\.lock\\)$`, 'm'), 'one daemon per state folder');
  t.match(status.stdout, new RegExp(`^config file:\\s+${daemon.dir}/\\S+$`, 'm'), 'the config file it read');
  t.match(status.stdout, /^skills folders:\s+\/\S+/m, 'where it looks for skills');
  t.match(status.stdout, /^engine codex:\s+version unknown \(\S+fake-codex\.mjs\);/m, 'each engine, and whether it can run (the fakes print no version)');
  t.match(status.stdout, /^engine claude:\s+/m);
  t.match(status.stdout, /^containment:\s+each engine in a (cgroup|process group) of its own/m);
  t.match(status.stdout, /^internal errors:\s+none$/m);
  t.notMatch(status.stdout, /[{}]/, 'no JSON in the human form');
  t.match(status.stdout, /^sandbox:\s+preferred: jobs run (in a sandbox, as \S+ \(uid \d+\)(, not the daemon's user)?|without a sandbox: .+)$/m, 'the sandbox, and who jobs run as');
  t.match(status.stdout, /^network:\s+(isolated: each job has a network of its own \(its bridge: (socat|node)\); it reaches each engine's own hosts, and what its skill allows|open: jobs share the host's network: jobs run without a sandbox.+)$/m, "the network: each job's own where the sandbox runs");
  t.match(status.stdout, /^limit processes:\s+512 processes \((cgroup v[12]|not enforced: .+)\)$/m, 'each limit, and whether it holds');
  t.match(status.stdout, /^limit tmp:\s+512 MiB \(/m);
  t.match(status.stdout, /^limit workspace:\s+10 GiB \(measured at each turn's end/m);
  t.equal((JSON.parse((await ctl(['status', '--json'])).stdout) as { socket: string }).socket, daemon.socket);
  const skills = await ctl(['skills']);
  t.match(skills.stdout, /^echo-auto\s+1\.0\.0\s+ok\s+auto\s+codex,gemini,iflow,claude/m);
  t.match(JSON.parse((await ctl(['skills', 'show', 'echo-auto', '--json'])).stdout), { id: 'echo-auto', schemas: { output: { required: ['greeting'] } } });
  const engines = JSON.parse((await ctl(['engines', '--json'])).stdout) as { engines: Array<{ name: string }> };
  t.same(engines.engines.map((e) => e.name).sort(), ['claude', 'codex', 'gemini', 'iflow']);
});

t.test('call sends a raw request; an error answer goes to stderr as JSON with exit 1', async (t) => {
  const ping = await ctl(['call', 'daemon/ping']);
  t.equal(ping.code, 0, ping.stderr);
  t.match(JSON.parse(ping.stdout), { ok: true });
  const missing = await ctl(['call', 'jobs/get', '{"job_id":"no-such-job"}']);
  t.equal(missing.code, 1);
  t.match(JSON.parse(missing.stderr), { code: 2001, data: { code: 'JOB_NOT_FOUND' } });
});

t.test('bad params exit 1 with the stable code on stderr', async (t) => {
  const noSkill = await ctl(['run', 'no-such-skill', '--engine', 'codex']);
  t.equal(noSkill.code, 1);
  t.match(noSkill.stderr, /^skillctl: SKILL_NOT_FOUND: /);
  const badLimit = await ctl(['jobs', '--limit', '0']);
  t.equal(badLimit.code, 1);
  t.match(badLimit.stderr, /^skillctl: INVALID_PARAMS: /);
  const badInput = await ctl(['run', 'echo-auto', '--engine', 'codex', '--input', 'unknown=1']);
  t.equal(badInput.code, 1);
  t.match(badInput.stderr, /^skillctl: INPUT_INVALID: input \/ must NOT have the property "unknown" /, 'the extra property is named');
});

t.test('an unknown command exits 2 with the nearest command, not the whole help', async (t) => {
  const typo = await ctl(['stauts']);
  t.equal(typo.code, 2);
  t.equal(typo.stderr, 'skillctl: unknown command "stauts"; did you mean "status"?\n(the commands: skillctl help)\n');
  const far = await ctl(['frobnicate']);
  t.equal(far.code, 2);
  t.equal(far.stderr, 'skillctl: unknown command "frobnicate"\n(the commands: skillctl help)\n', 'nothing near: no guess');
  t.equal(far.stdout, '');
});

t.test('SKILL_NOT_FOUND names the nearest skill there is', async (t) => {
  const out = await ctl(['run', 'echo-aut', '--engine', 'codex']);
  t.equal(out.code, 1);
  t.equal(out.stderr, 'skillctl: SKILL_NOT_FOUND: no skill "echo-aut"; did you mean "echo-auto"?\n');
});

t.test('with --json an error is one JSON line on stderr with its code, for usage, an unreachable daemon and an error answer alike', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skillctl-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const usage = await ctl(['jobs', '--no-such-flag', '--json']);
  t.equal(usage.code, 2);
  t.match(JSON.parse(usage.stderr), { error: { code: 'USAGE_ERROR', message: /no-such-flag/ } });
  const unreachable = await ctl(['status', '--json'], { socket: join(dir, 'none.sock') });
  t.equal(unreachable.code, 3);
  t.match(JSON.parse(unreachable.stderr), { error: { code: 'DAEMON_UNREACHABLE', details: { socket: join(dir, 'none.sock') } } });
  const answer = await ctl(['run', 'echo-auto', '--engine', 'codex', '--input', 'unknown=1', '--json']);
  t.equal(answer.code, 1);
  t.match(JSON.parse(answer.stderr), { error: { code: 'INPUT_INVALID', message: String } });
  for (const out of [usage, unreachable, answer]) {
    t.equal(out.stdout, '');
    t.equal(out.stderr.split('\n').length, 2, 'one line');
  }
});

t.test("version shows skillctl's version and the daemon's, each with its protocol; without a daemon the client's, and exit 3", async (t) => {
  const out = await ctl(['version']);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, /^client: +skillctl \d+\.\d+\.\d+\S*, protocol 1\ndaemon: +skilld \d+\.\d+\.\d+\S*, protocol 1\n$/);
  const json = JSON.parse((await ctl(['version', '--json'])).stdout) as { client: { version: string }; daemon: { version: string } };
  t.match(json, { client: { protocol: 1 }, daemon: { protocol: 1 } });
  t.equal(json.client.version, json.daemon.version, 'one build here');
  const dir = await mkdtemp(join(tmpdir(), 'skillctl-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const alone = await ctl(['version'], { socket: join(dir, 'none.sock') });
  t.equal(alone.code, 3);
  t.match(alone.stdout, /^client: skillctl .*, protocol 1\n$/);
  t.match(alone.stderr, `cannot reach the daemon at ${join(dir, 'none.sock')}`);
});

t.test('usage errors exit 2 with the usage on stderr', async (t) => {
  const cases = [[], ['jobs', '--no-such-flag'], ['show'], ['run', 'echo-auto', '-i', 'emit=@'], ['run', 'echo-auto', '-e', 'codex', '--input', 'novalue'], ['call', 'daemon/ping', '{bad']];
  const outcomes = await Promise.all(cases.map((args) => ctl(args)));
  outcomes.forEach((out, i) => {
    t.equal(out.code, 2, `skillctl ${(cases[i] ?? []).join(' ')}`);
    t.match(out.stderr, /usage: skillctl /);
    t.equal(out.stdout, '');
  });
  const help = await ctl(['--help'], { socket: null });
  t.equal(help.code, 0);
  for (const name of ['status', 'skills', 'engines', 'run', 'attach', 'jobs', 'show', 'result', 'cancel', 'logs', 'watch', 'call']) t.match(help.stdout, new RegExp(`^  ${name}\\b`, 'm'));
});

t.test('a socket where nothing listens exits 3', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skillctl-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const flag = await ctl(['status'], { socket: join(dir, 'none.sock') });
  t.equal(flag.code, 3);
  t.match(flag.stderr, `skillctl: cannot reach the daemon at ${join(dir, 'none.sock')}: `);
  const runtime = await ctl(['status'], { socket: null, env: { XDG_RUNTIME_DIR: dir } });
  t.equal(runtime.code, 3);
  t.match(runtime.stderr, `at ${join(dir, 'skilld', 'skilld.sock')}: `, 'the default follows XDG_RUNTIME_DIR');
});

t.test('SKILLD_SOCKET names the socket when --socket is absent', async (t) => {
  const out = await ctl(['call', 'daemon/ping'], { socket: null, env: { SKILLD_SOCKET: daemon.socket } });
  t.equal(out.code, 0, out.stderr);
});

t.test('hosts: a daemon alone on its store is the one host, live, with the jobs it holds (a lease only on a shared store)', async (t) => {
  const shared = process.env['SKILLD_TEST_STORE'] === 'postgres';
  const out = await ctl(['hosts']);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, new RegExp(`^HOST +STATE +LEASE LEFT +VERSION +SLOTS +JOBS\\n\\S+ +live +${shared ? '\\S+' : '-'} +\\d+\\.\\d+\\.\\d+\\S* +\\d+ +\\d+ running, \\d+ waiting, \\d+ queued\\n$`));
  const json = JSON.parse((await ctl(['hosts', '--json'])).stdout) as { hosts: Array<Record<string, unknown>> };
  t.match(json.hosts, [{ state: 'live', lease_until: shared ? String : null, pid: Number, jobs: { queued: Number, running: Number, waiting_user: Number } }]);
  t.equal(json.hosts.length, 1);
});
