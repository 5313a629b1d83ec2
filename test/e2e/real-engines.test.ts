import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codex } from '../../daemon/engines/codex.js';
import { realEngineBins } from '../fixtures/engine-homes.js';
import type { ModelRequest } from '../fixtures/model-server.js';
import { REFUSED_KEY, processesIn, realEngineRig } from '../helpers/real-engine-runs.js';
import { ROOT, waitForStatus, type JobView } from '../helpers/daemon.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { lanAddress, refusalsOf, trapListener } from '../helpers/network.js';

/**
 * The real Codex, Gemini and Claude Code CLIs (dev dependencies, exact versions) driven through the daemon,
 * offline, against a scripted model server on 127.0.0.1. A flag the real CLI rejects fails here.
 */
const bins = realEngineBins(join(ROOT, 'node_modules'));
// About twenty turns of real CLIs, and Gemini alone takes 5 to 20 s to run one on a busy
// machine: this file gets a time limit of its own instead of the suite's 120 s.
t.setTimeout(360_000);

/** A reply of about 1 MB that starts like an option: over the 128 KiB an argv element may have. */
const BIG_REPLY = `--${'0123456789'.repeat(99_990)} ✓ end`;
/** An input value of about 500 KB. */
const BIG_INPUT = `--${'i'.repeat(500_000)}`;

for (const engine of ['codex', 'gemini', 'claude'] as const) {
  const bin = bins[engine];
  t.test(`real ${engine} CLI through the daemon`, { skip: bin === null ? `the real ${engine} CLI is not installed in node_modules (npm ci installs it as a dev dependency); these tests did NOT run` : false }, async (t) => {
    // Gemini's own --help can take over the probe's 5 s on a loaded machine: its profile is forced here.
    const { server, home, daemon, client } = await realEngineRig(t, engine, bin as string, engine === 'gemini' ? { profile: 'resumable' } : {});
    const create = (scenario: string, mode = 'auto', extra: Record<string, unknown> = {}): Promise<JobView> =>
      client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: mode, input: { scenario }, ...extra });

    t.test('auto job succeeds with the validated output', async (t) => {
      const job = await waitForStatus(client, (await create('ok')).job_id);
      t.equal(job.status, 'succeeded', JSON.stringify(job.error));
      t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'from a real CLI' } });
    });

    t.test('interactive: ask, wait, reply, resume the same session in a new process, succeed', async (t) => {
      const since = server.modelRequests().length;
      const created = await create('ask', 'interactive');
      if (engine !== 'gemini') t.match(created, { interactive_profile: { kind: 'resumable', reason: /exits 0/ } }, `PR-1 the real ${engine} passes the resume probe`);
      const waiting = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
      t.equal(waiting.status, 'waiting_user', JSON.stringify(waiting.error));
      const handle = waiting['session_handle'] as { handle_value: string };
      t.match(handle, { engine, handle_type: 'session_id', handle_value: /^[0-9a-f-]{20,}$/ }, 'the handle comes from the real output');
      t.match(await client.request('jobs/pending', { job_id: created.job_id }), { pending: { interaction_id: 1, prompt: 'Which city should I use?' } });
      const before = server.modelRequests().length;
      await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: '- Rome, please' });
      const done = await waitForStatus(client, created.job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      t.match(await client.request('jobs/result', { job_id: created.job_id }), { output: { reply: '- Rome, please' } }, 'a reply starting with a dash reaches the model verbatim');
      const resumedRequest = server.modelRequests()[before] as ModelRequest;
      t.ok(resumedRequest.userTexts.some((text) => text.startsWith('Run the skill')), 'the resumed turn carries the earlier turns: same session');
      t.equal((done['session_handle'] as { handle_value: string }).handle_value, handle.handle_value);
      t.equal(done['attempt'], 2);
      const calls = server.modelRequests().slice(since).length;
      t.same(done['usage'], { input_tokens: 10 * calls, output_tokens: 5 * calls, cached_input_tokens: 0, requests: calls }, "usage as the engine reported it, no gateway: what the server's answers said, over both turns");
    });

    if (engine === 'codex') {
      t.test('the real codex refuses a prompt of more characters than the adapter lets through', async (t) => {
        const limit = codex.prompt.maxChars ?? 0;
        const cwd = await mkdtemp(join(tmpdir(), 'codex-limit-'));
        t.teardown(() => rm(cwd, { recursive: true, force: true }));
        const child = spawn(bin as string, ['exec', '--skip-git-repo-check', '--json', '--yolo', '--', '-'], { cwd, env: { ...process.env, ...home.env }, stdio: ['pipe', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.stdin.end('a'.repeat(limit + 1));
        const [code] = (await once(child, 'exit')) as [number | null];
        t.equal(code, 1);
        t.match(stderr, `Input exceeds the maximum length of ${limit} characters`);
      });
    }

    t.test('a model name reaches the CLI as --model=; a ~500 KB input and a ~1 MB reply go on stdin and reach the model whole', async (t) => {
      const other = { codex: 'other-model', gemini: 'gemini-2.5-pro', claude: 'claude-other-model' }[engine];
      t.not(other, home.model, 'not the model the home selects');
      const since = server.modelRequests().length;
      const created = await create('ask', 'interactive', { input: { scenario: 'ask', emit: BIG_INPUT }, model: other });
      t.equal((await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded'])).status, 'waiting_user');
      const sent = await readFile(join(daemon.runDir(created.job_id), 'attempts', '1', 'prompt.txt'), 'utf8');
      t.ok(sent.includes(BIG_INPUT) && Buffer.byteLength(sent) > 128 * 1024, 'the first prompt is over the argv element limit');
      t.ok(server.modelRequests().some((r) => r.prompt === sent), 'the model got the whole first prompt');
      const before = server.modelRequests().length;
      await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: BIG_REPLY });
      const done = await waitForStatus(client, created.job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      const resumed = server.modelRequests()[before] as ModelRequest;
      t.ok(resumed.prompt === BIG_REPLY, 'the model got the whole reply as the new user message');
      t.ok(resumed.userTexts.includes(sent), 'in the same session');
      t.same([...new Set(server.modelRequests().slice(since).map((r) => r.model))], [other], `every turn asked the model server for ${other}`);
    });

    t.test('a tool call writes an artifact into the run artifacts folder', async (t) => {
      const job = await waitForStatus(client, (await create('tool')).job_id);
      t.equal(job.status, 'succeeded', JSON.stringify(job.error));
      const result = await client.request<{ artifacts: string[] }>('jobs/result', { job_id: job.job_id });
      t.same(result.artifacts, [join(daemon.runDir(job.job_id), 'workspace', 'artifacts', 'out.txt')]);
      t.ok((await stat(result.artifacts[0] as string)).isFile());
    });

    t.test('in its sandbox, a tool call that reads another job\'s file is refused', { skip: NO_SANDBOX }, async (t) => {
      const other = await waitForStatus(client, (await create('ok')).job_id);
      const secret = join(daemon.runDir(other.job_id), 'workspace', 'secret.txt');
      await writeFile(secret, 'another job\'s secret\n');
      const job = await waitForStatus(client, (await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, input: { scenario: 'read_other', target: secret } })).job_id);
      t.match(job, { status: 'succeeded', isolation: 'sandbox' }, JSON.stringify(job.error));
      const read = await readFile(join(daemon.runDir(job.job_id), 'workspace', 'artifacts', 'read.txt'), 'utf8');
      t.match(read, /No such file or directory\nexit=1\n$/, 'the command ran, and found nothing there');
      t.notMatch(read, 'another job\'s secret');
    });

    t.test("in its own network, a tool's connections reach neither the host nor the cloud metadata nor an unnamed host", { skip: NO_SANDBOX }, async (t) => {
      const trap = await trapListener();
      const lan = lanAddress() ?? '192.0.2.1';
      const job = await waitForStatus(client, (await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, input: { scenario: 'reach_out', target: `${lan} ${trap.port}` } })).job_id);
      t.match(job, { status: 'succeeded', isolation: 'sandbox' }, JSON.stringify(job.error));
      const reach = await readFile(join(daemon.runDir(job.job_id), 'workspace', 'artifacts', 'reach.txt'), 'utf8');
      for (const name of ['loopback-direct', 'lan-direct', 'metadata-direct']) t.match(reach, new RegExp(`^000 ${name} exit=(7|28)$`, 'm'), `${name}: no connection`);
      for (const name of ['lan-proxy', 'metadata-proxy']) t.match(reach, new RegExp(`^403 ${name} exit=0$`, 'm'), `${name}: the proxy said no`);
      t.match(reach, /^000 name-proxy exit=56$/m, 'the tunnel to an unnamed host refused');
      t.equal(trap.count(), 0, "nothing reached the host's listener");
      const refused = await refusalsOf(client, job.job_id);
      t.same(refused.map((one) => `${one.host}:${one.port}`).sort(), [`${lan}:${trap.port}`, '169.254.169.254:80', 'exfiltrate.example:443'].sort(), 'each refusal an event of the job');
    });

    t.test('cancel mid-turn leaves no process behind, tool subprocesses included', async (t) => {
      const created = await create(engine === 'gemini' ? 'sleep_tool' : 'hang');
      await server.waitForModelRequest();
      const workspace = join(daemon.runDir(created.job_id), 'workspace');
      if (engine === 'gemini') {
        // Wait until the shell tool runs: it lives in its own session, outside the engine's group.
        for (let i = 0; i < 400 && (await processesIn(workspace)).length < 2; i += 1) await new Promise((r) => setTimeout(r, 25));
      }
      t.ok((await processesIn(workspace)).length >= 1, 'the engine runs');
      t.match(await client.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
      t.same(await processesIn(workspace), [], 'nothing is left running in the job workspace');
    });

    // Claude Code retries a refused key and a 429 for minutes (its error result, recorded without
    // retries, is read in test/unit/provider-errors.test.ts); Codex and Gemini run here without retries.
    t.test("the provider refusing the key, or limiting the requests, is the job's error code, quoting the engine but never the key", { skip: engine === 'claude' ? 'Claude Code retries for minutes' : false }, async (t) => {
      const refused = await waitForStatus(client, (await create('key_refused')).job_id);
      t.match(refused, { status: 'failed', error: { code: 'PROVIDER_AUTH_FAILED', message: /^the model provider refused the engine's key \(HTTP 401\): .*Incorrect API key provided: \[redacted\]/ } });
      t.notMatch(refused.error?.message ?? '', REFUSED_KEY);
      const limited = await waitForStatus(client, (await create('rate_limited')).job_id);
      t.match(limited, { status: 'failed', error: { code: 'PROVIDER_RATE_LIMITED', message: /^the model provider limited the engine's requests \(HTTP 429\) and the engine gave up: / } });
    });

    t.test('resuming a lost session fails with SESSION_RESUME_FAILED', async (t) => {
      const created = await create('ask', 'interactive');
      await waitForStatus(client, created.job_id, ['waiting_user']);
      const waiting = await client.request<JobView>('jobs/get', { job_id: created.job_id });
      // Lose the engine's saved sessions, as after a wiped home: the job's own, in a sandbox.
      const saved = { codex: 'sessions', gemini: join('.gemini', 'tmp'), claude: 'projects' }[engine];
      await rm(join(waiting.isolation === 'sandbox' ? join(daemon.runDir(created.job_id), 'home') : home.dir, saved), { recursive: true, force: true });
      await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
      const failed = await waitForStatus(client, created.job_id);
      t.match(failed, { status: 'failed', error: { code: 'SESSION_RESUME_FAILED' } });
    });
  });
}
