// Values from clients and engines on engine command lines, through the real daemon and the fake
// engines: a model name is refused unless it matches the documented pattern and is passed as
// `--model=`; a session id an engine reports is dropped unless it cannot be read as an option;
// a prompt too large for an argument goes on stdin where the CLI reads it there, or is refused
// with INVALID_PARAMS before anything is stored; an engine that cannot be started is named, with
// the OS error, but never its command line; a job's error message quotes long stderr lines cut.
import t from 'tap';
import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcClient } from '../../rpc/client.js';
import { ENGINE_NAMES, FIXTURES, TestDaemon, rpcError, waitForStatus, type JobView, type TestEngine } from '../helpers/daemon.js';

const daemon = await TestDaemon.start({ config: { max_concurrent: 4 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

/** A reply of about 1 MB that starts like an option: it still fits in one 1 MiB request line. */
const BIG_REPLY = `--${'0123456789'.repeat(99_990)} ✓ é end`;
/** An input of about 500 KB, whose value starts like an option. */
const BIG_GREETING = `--${'g'.repeat(500_000)}`;
/** Linux's MAX_ARG_STRLEN: no argv element may be this long. */
const MAX_ARG_STRLEN = 128 * 1024;

function create(c: RpcClient, engine: TestEngine, extra: Record<string, unknown>): Promise<JobView> {
  return c.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, ...extra });
}

async function waitingJob(engine: TestEngine, extra: Record<string, unknown> = {}): Promise<JobView> {
  const created = await create(client, engine, { execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: engine } }, ...extra });
  const job = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
  if (job.status !== 'waiting_user') throw new Error(`job did not wait: ${JSON.stringify(job.error)}`);
  return job;
}

async function runFolders(): Promise<string[]> {
  return (await readdir(join(daemon.stateDir, 'runs')).catch(() => [])).sort();
}

function prompt(jobId: string, attempt: number): Promise<string> {
  return readFile(join(daemon.runDir(jobId), 'attempts', String(attempt), 'prompt.txt'), 'utf8');
}

t.test('jobs/create refuses a model that could be read as an option or is not a plain name, storing nothing', async (t) => {
  const before = await runFolders();
  const { jobs } = await client.request<{ jobs: unknown[] }>('jobs/list', {});
  for (const model of ['--version', '-m', 'a=b', 'gpt 5', 'gpt-5\n--help', 'gpt-5\n', '', 'x'.repeat(129), '.hidden', 'é-model']) {
    for (const engine of ENGINE_NAMES) {
      const error = await rpcError(create(client, engine, { input: {}, model }));
      t.equal(error.dataCode, 'INVALID_PARAMS', `${engine} ${JSON.stringify(model.slice(0, 20))}`);
      t.match(error.details, { path: '/model' });
    }
  }
  t.same(await runFolders(), before, 'no run folder was made');
  t.equal((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs.length, jobs.length, 'no job was stored');
});

t.test('an accepted model reaches codex and gemini as one --model= element; iflow takes none', async (t) => {
  const model = 'vendor/model-1.5:latest@2025+x';
  for (const engine of ENGINE_NAMES) {
    const done = await waitForStatus(client, (await create(client, engine, { input: { scenario: 'ok' }, model })).job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    t.equal(done['model'], model);
    const [call] = await daemon.engineCalls(done.job_id);
    if (engine === 'iflow') t.notOk(call?.argv.some((a) => a.includes(model)), 'iflow: no model on its command line');
    else t.equal(call?.argv.filter((a) => a.includes(model)).join(' '), `--model=${model}`, `${engine}: --model=<name>`);
  }
  const longest = await create(client, 'codex', { input: {}, model: `m${'x'.repeat(127)}` });
  t.equal(longest['model'], `m${'x'.repeat(127)}`, '128 characters are accepted');
  await waitForStatus(client, longest.job_id);
});

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: an input value and a reply that start with -- reach the engine verbatim, on stdin where it reads one`, async (t) => {
    const waiting = await waitingJob(engine, { input: { scenario: 'ask', emit: { greeting: '--version' } } });
    await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: '--help' });
    const done = await waitForStatus(client, waiting.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const calls = await daemon.engineCalls(waiting.job_id);
    t.equal(calls[0]?.prompt, await prompt(waiting.job_id, 1));
    t.match(calls[0]?.prompt, /- emit: \{"greeting":"--version"\}/);
    t.equal(calls[1]?.prompt, '--help');
    if (engine === 'iflow') t.equal(calls[1]?.argv.at(-1), '--prompt=--help', 'iFlow is given its prompt as an argument');
    else t.notOk(calls.some((call) => call.argv.some((word) => word.includes('--help') || word.includes('greeting'))), 'no prompt on the command line, however small: on stdin');
    t.same((await client.request<{ output: unknown }>('jobs/result', { job_id: waiting.job_id })).output, { greeting: '--version', reply: '--help' });
  });

  t.test(`${engine}: a session id the engine reports that starts with - is never stored or resumed`, async (t) => {
    const created = await create(client, engine, { execution_mode: 'interactive', input: { scenario: 'ask' }, parameter: { session_id: '--help' } });
    const done = await waitForStatus(client, created.job_id);
    t.match(done, { status: 'failed', error: { code: 'SESSION_RESUME_FAILED', message: /no valid session id/ }, session_handle: null });
    const calls = await daemon.engineCalls(created.job_id);
    t.same(calls.map((c) => c.session), ['--help'], 'the engine did report it, and no resume ran');
  });
}

for (const engine of ['codex', 'gemini'] as const) {
  t.test(`${engine}: a ~1 MB reply goes on stdin and reaches the engine byte for byte`, async (t) => {
    t.ok(Buffer.byteLength(BIG_REPLY) > 900_000 && Buffer.byteLength(BIG_REPLY) > MAX_ARG_STRLEN);
    const waiting = await waitingJob(engine);
    const answer = await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: BIG_REPLY });
    t.match(answer, { accepted: true });
    const done = await waitForStatus(client, waiting.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const [, resumed] = await daemon.engineCalls(waiting.job_id);
    t.ok(resumed?.prompt === BIG_REPLY, 'the engine got the whole reply');
    t.equal(await prompt(waiting.job_id, 2), BIG_REPLY);
    const handle = (waiting['session_handle'] as { handle_value: string }).handle_value;
    t.same(resumed?.argv, engine === 'codex' ? ['exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', '--', handle, '-'] : [`--resume=${handle}`, '--yolo', '--output-format', 'json']);
    t.ok((await client.request<{ output: { reply: string } }>('jobs/result', { job_id: waiting.job_id })).output.reply === BIG_REPLY, 'and answered with it');
  });

  t.test(`${engine}: a ~500 KB input goes on stdin and reaches the engine byte for byte`, async (t) => {
    const done = await waitForStatus(client, (await create(client, engine, { input: { scenario: 'ok', emit: { greeting: BIG_GREETING } } })).job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const [call] = await daemon.engineCalls(done.job_id);
    const sent = await prompt(done.job_id, 1);
    t.ok(sent.includes(JSON.stringify(BIG_GREETING)) && Buffer.byteLength(sent) > MAX_ARG_STRLEN);
    t.ok(call?.prompt === sent, 'the engine got the whole first prompt');
    t.same(call?.argv, engine === 'codex' ? ['exec', '--skip-git-repo-check', '--json', '--yolo', '--', '-'] : ['--yolo', '--output-format', 'json']);
    t.ok((await client.request<{ output: { greeting: string } }>('jobs/result', { job_id: done.job_id })).output.greeting === BIG_GREETING);
  });
}

t.test('codex: the reply `-` goes on stdin (as an argument it would mean "read stdin"); an empty reply goes as an argument', async (t) => {
  for (const reply of ['-', '']) {
    const waiting = await waitingJob('codex');
    await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: reply });
    t.equal((await waitForStatus(client, waiting.job_id)).status, 'succeeded');
    const [, resumed] = await daemon.engineCalls(waiting.job_id);
    t.equal(resumed?.prompt, reply);
    t.equal(resumed?.argv.at(-1), reply === '-' ? '-' : '', JSON.stringify(reply));
  }
});

t.test('iflow: an input too large for an argument gets INVALID_PARAMS naming the limit, and no job is created', async (t) => {
  const before = await runFolders();
  const error = await rpcError(create(client, 'iflow', { input: { scenario: 'ok', emit: { greeting: BIG_GREETING } } }));
  t.equal(error.dataCode, 'INVALID_PARAMS');
  t.match(error.message, /cannot reach iflow: iflow takes at most 102400 bytes of prompt as an argument; this one has \d+/);
  t.same(await runFolders(), before, 'nothing stored');
});

t.test('iflow: a reply too large for an argument gets INVALID_PARAMS; the job keeps waiting with its question', async (t) => {
  const waiting = await waitingJob('iflow');
  const error = await rpcError(client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: BIG_REPLY }));
  t.equal(error.dataCode, 'INVALID_PARAMS');
  t.match(error.details, { path: '/response', message: /at most 102400 bytes/ });
  t.match(await client.request('jobs/get', { job_id: waiting.job_id }), { status: 'waiting_user', pending_interaction_id: 1, attempt: 1 });
  t.match(await client.request('jobs/pending', { job_id: waiting.job_id }), { pending: { interaction_id: 1, prompt: 'Which city should I use?' } });
  t.match(await client.request('jobs/history', { job_id: waiting.job_id }), { interactions: [{ interaction_id: 1, response: null, replied_at: null }] }, 'the reply was not stored');
  await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: 'Rome' });
  t.equal((await waitForStatus(client, waiting.job_id)).status, 'succeeded', 'a reply that fits is still taken');
});

t.test('gemini and iflow: an empty reply gets INVALID_PARAMS (the CLI exits on an empty prompt)', async (t) => {
  for (const engine of ['gemini', 'iflow'] as const) {
    const waiting = await waitingJob(engine);
    const error = await rpcError(client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: '' }));
    t.equal(error.dataCode, 'INVALID_PARAMS', engine);
    t.match(error.message, `${engine} does not run on an empty prompt`);
    await client.request('jobs/cancel', { job_id: waiting.job_id });
  }
});

t.test("a job's error message quotes megabytes of stderr in a few hundred bytes, the same in jobs/get and jobs/result", async (t) => {
  const done = await waitForStatus(client, (await create(client, 'codex', { input: { scenario: 'exit1_long_stderr' } })).job_id);
  t.equal(done.error?.code, 'ENGINE_EXIT_NONZERO');
  const message = done.error?.message ?? '';
  t.ok(Buffer.byteLength(message) < 1024, `${Buffer.byteLength(message)} bytes`);
  t.match(message, /^engine exited with code 1: error 1: x{200,}… \| … \| fatal: engine crashed$/, 'the first stderr line, cut, and the last');
  const result = await client.request<{ error: { message: string } }>('jobs/result', { job_id: done.job_id });
  t.equal(result.error.message, message);
});

t.test('a resumed turn whose engine cannot be started: SESSION_RESUME_FAILED naming the executable and the OS error, not the argv', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-engine-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const engine = join(dir, 'engine');
  await writeFile(engine, `#!/bin/sh\nexec ${join(FIXTURES, 'fake-codex.mjs')} "$@"\n`);
  await chmod(engine, 0o755);
  await chmod(dir, 0o755);
  // The program it starts is shown to the sandbox, which shows the wrapper's folder alone.
  const broken = await TestDaemon.start({ config: { max_concurrent: 1, engines: { codex: { command: [engine], sandbox: { read_only: [FIXTURES] } } } } });
  t.teardown(() => broken.cleanup());
  const c = await broken.client();
  const created = await create(c, 'codex', { execution_mode: 'interactive', input: { scenario: 'ask' } });
  t.equal((await waitForStatus(c, created.job_id, ['waiting_user', 'failed'])).status, 'waiting_user');
  await rm(engine);
  await c.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'a reply that must not show up in the error' });
  const failed = await waitForStatus(c, created.job_id);
  t.same(failed.error, { code: 'SESSION_RESUME_FAILED', message: `cannot start ${engine}: ENOENT; the session was not resumed` });
});
