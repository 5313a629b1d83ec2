// A NUL character (U+0000) in any string a client sends is refused before any method runs, alike
// on both stores (PostgreSQL's text cannot hold one); one an engine writes is kept and read back
// as it was; a skill whose runner.json holds one is invalid.
import t from 'tap';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcClient } from '../../rpc/client.js';
import { rpcError, TEST_SKILLS, TestDaemon, testPostgres, waitForStatus, type JobView } from '../helpers/daemon.js';

const NUL = '\u0000';
const postgres = await testPostgres();
const STORES = [
  ['files', false],
  ['postgres', typeof postgres === 'string' ? postgres : false],
] as const;
if (typeof postgres !== 'string') t.teardown(() => postgres.stop());

// A skill like echo-both whose runner.json version holds a NUL (written as the JSON escape \u0000).
const skillsDir = await mkdtemp(join(tmpdir(), 'skilld-nul-skills-'));
t.teardown(() => rm(skillsDir, { recursive: true, force: true }));
await cp(join(TEST_SKILLS, 'echo-both'), join(skillsDir, 'nul-version'), { recursive: true });
await writeFile(join(skillsDir, 'nul-version', 'assets', 'runner.json'), '{"id": "nul-version", "version": "1.0\\u0000", "execution_modes": ["auto", "interactive"]}');

async function internalErrors(client: RpcClient): Promise<number> {
  return (await client.request<{ internal_errors: { count: number } }>('daemon/status')).internal_errors.count;
}

for (const [store, skip] of STORES) {
  t.test(`${store}: a NUL in any string of params (a job id, input, parameter, a key, a reply) gets INVALID_PARAMS naming where, never INTERNAL_ERROR`, { skip }, async (t) => {
    const daemon = await TestDaemon.start({ store, skillsDirs: [TEST_SKILLS, skillsDir] });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    const waiting = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask' } });
    await waitForStatus(client, waiting.job_id, ['waiting_user']);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['jobs/get', { job_id: `${waiting.job_id}${NUL}` }, '/job_id'],
      ['jobs/logs', { job_id: `job-${NUL}` }, '/job_id'],
      ['jobs/list', { skill_id: `echo${NUL}` }, '/skill_id'],
      ['jobs/list', { id_prefix: `job-${NUL}` }, '/id_prefix'],
      ['skills/get', { skill_id: `echo-both${NUL}` }, '/skill_id'],
      ['jobs/create', { skill_id: 'echo-both', engine: 'codex', input: { scenario: `ok${NUL}` } }, '/input/scenario'],
      ['jobs/create', { skill_id: 'echo-both', engine: 'codex', input: { emit: { [`key${NUL}`]: 1 } } }, '/input/emit'],
      ['jobs/create', { skill_id: 'echo-both', engine: 'codex', parameter: { list: ['ok', NUL] } }, '/parameter/list/1'],
      ['jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: { text: `Paris${NUL}` } }, '/response/text'],
      ['jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: 'Paris', idempotency_key: `k${NUL}` }, '/idempotency_key'],
    ];
    for (const [method, params, path] of cases) {
      const error = await rpcError(client.request(method, params));
      t.match(error, { dataCode: 'INVALID_PARAMS', message: /must not (contain|have a key with) a NUL character/, details: { path } }, `${method} ${path}`);
    }
    t.equal(await internalErrors(client), 0, 'none of them was an internal error');
    t.match(await client.request('jobs/get', { job_id: waiting.job_id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'the job still waits for its reply');
    await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: 'Paris' });
    t.match(await waitForStatus(client, waiting.job_id), { status: 'succeeded' }, 'and takes a good one');
  });

  t.test(`${store}: a NUL an engine writes, in what the agent says and in its result, is stored and read back as it was`, { skip }, async (t) => {
    const daemon = await TestDaemon.start({ store });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    const text = `before${NUL}after`;
    for (const engine of ['codex', 'gemini', 'claude']) {
      const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario: 'nul' } });
      const done = await waitForStatus(client, job.job_id);
      t.equal(done.status, 'succeeded', `${engine}: ${JSON.stringify(done.error)}`);
      t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'hello', text } }, `${engine}: the result`);
      const events: Array<{ type: string; data: { text?: string } }> = [];
      const finished = new Promise<void>((resolve) => {
        client.on('job/event', (params) => {
          const event = params as { job_id: string; type: string; data: { text?: string } };
          if (event.job_id !== job.job_id) return;
          events.push(event);
          if (event.type === 'finished') resolve();
        });
      });
      await client.request('jobs/subscribe', { job_id: job.job_id, after_seq: 0 });
      await finished;
      t.ok(events.some((e) => e.type === 'message' && e.data.text?.startsWith(`${text}\n`) === true), `${engine}: the agent's message, replayed from the store`);
    }
    t.equal(await internalErrors(client), 0);
  });

  t.test(`${store}: a skill whose runner.json holds a NUL in a string is invalid, naming where, and takes no jobs`, { skip }, async (t) => {
    const daemon = await TestDaemon.start({ store, skillsDirs: [skillsDir] });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    t.match(await client.request('skills/get', { skill_id: 'nul-version' }), {
      status: 'invalid',
      error: { code: 'SKILL_MANIFEST_INVALID', message: /runner\.json: \/version must not contain a NUL character/ },
    });
    t.match(await rpcError(client.request('jobs/create', { skill_id: 'nul-version', engine: 'codex', execution_mode: 'interactive' })), { dataCode: 'SKILL_INVALID' });
  });
}
