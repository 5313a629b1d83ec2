// Values from clients and engines on engine command lines, through the real daemon and the fake
// engines: a model name is refused unless it matches the documented pattern and is passed as
// `--model=`; a session id an engine reports is dropped unless it cannot be read as an option.
import t from 'tap';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';
import { ENGINE_NAMES, TestDaemon, waitForStatus, type JobView, type TestEngine } from '../helpers/daemon.js';

const daemon = await TestDaemon.start({ config: { max_concurrent: 4 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function rpcError(promise: Promise<unknown>): Promise<RpcCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcCallError) return error;
    throw error;
  }
  throw new Error('the request succeeded; an error was expected');
}

function create(c: RpcClient, engine: TestEngine, extra: Record<string, unknown>): Promise<JobView> {
  return c.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, ...extra });
}

async function runFolders(): Promise<string[]> {
  return (await readdir(join(daemon.stateDir, 'runs')).catch(() => [])).sort();
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
  t.test(`${engine}: a session id the engine reports that starts with - is never stored or resumed`, async (t) => {
    const created = await create(client, engine, { execution_mode: 'interactive', input: { scenario: 'ask' }, parameter: { session_id: '--help' } });
    const done = await waitForStatus(client, created.job_id);
    t.match(done, { status: 'failed', error: { code: 'SESSION_RESUME_FAILED', message: /no valid session id/ }, session_handle: null });
    const calls = await daemon.engineCalls(created.job_id);
    t.same(calls.map((c) => c.session), ['--help'], 'the engine did report it, and no resume ran');
  });
}

