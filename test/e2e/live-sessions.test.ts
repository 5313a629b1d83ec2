// Live sessions through the daemon: sticky jobs whose turns run in one engine process over the
// engine's own protocol, with the fakes' protocol modes (which print what the real CLIs print;
// see test/unit/fake-transcripts.test.ts). The real CLIs: test/e2e/real-engines.test.ts.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, TestDaemon, alive, waitForFile, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';

/** The engines with a live protocol, each with its fake. */
const LIVE_ENGINES = ['codex'] as const;

const engines = Object.fromEntries(LIVE_ENGINES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)], profile: 'sticky_process' }]));
const daemon = await TestDaemon.start({ config: { max_concurrent: 2, kill_grace_ms: 300, engines } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function started(engine: string, scenario: string, extra: Record<string, unknown> = {}): Promise<{ jobId: string; pid: number; workspace: string }> {
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario, emit: { greeting: 'g' } }, ...extra });
  const workspace = join(daemon.runDir(created.job_id), 'workspace');
  const pid = Number(await waitForFile(join(workspace, '.fake-engine', 'pid')));
  return { jobId: created.job_id, pid, workspace };
}

/** The attempt's raw engine output, as the daemon logged it. */
async function stdoutOf(jobId: string, attempt = 1): Promise<string> {
  return readFile(join(daemon.runDir(jobId), 'attempts', String(attempt), 'stdout.log'), 'utf8');
}

for (const engine of LIVE_ENGINES) {
  t.test(`${engine}: the session id is the job's handle as soon as the engine names it, before the first turn ends`, async (t) => {
    const { jobId } = await started(engine, 'hang');
    let job = await client.request<JobView>('jobs/get', { job_id: jobId });
    for (let tries = 0; job['session_handle'] === null && tries < 1000; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      job = await client.request<JobView>('jobs/get', { job_id: jobId });
    }
    t.equal(job.status, 'running');
    t.match(job['session_handle'], { engine, handle_type: 'session_id', handle_value: /^[0-9a-f-]{36}$/ });
    await client.request('jobs/cancel', { job_id: jobId });
  });

  t.test(`${engine}: cancel while a turn runs asks the engine to interrupt it; the job is canceled and no process is left`, async (t) => {
    const { jobId, pid, workspace } = await started(engine, 'hang');
    const tool = Number(await waitForFile(join(workspace, '.fake-engine', 'child-pid')));
    t.match(await client.request('jobs/cancel', { job_id: jobId }), { status: 'canceled', accepted: true });
    t.match(await stdoutOf(jobId), /"status":"interrupted"/, 'the engine ended the turn by the protocol');
    await waitUntilGone(pid);
    await waitUntilGone(tool);
    t.match(await client.request('daemon/status'), { slots: { used: 0 } });
  });

  t.test(`${engine}: a turn past hard_timeout_sec is interrupted and the job fails with TIMEOUT`, async (t) => {
    const { jobId, pid } = await started(engine, 'hang', { hard_timeout_sec: 1 });
    t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'TIMEOUT' } });
    t.match(await stdoutOf(jobId), /"status":"interrupted"/);
    await waitUntilGone(pid);
  });

  t.test(`${engine}: an engine that does not answer the interrupt is stopped after kill_grace_ms`, async (t) => {
    const { jobId, pid } = await started(engine, 'hang');
    process.kill(pid, 'SIGSTOP'); // it can read nothing, and answer nothing
    t.teardown(() => alive(pid) && process.kill(pid, 'SIGKILL'));
    t.match(await client.request('jobs/cancel', { job_id: jobId }), { status: 'canceled', accepted: true });
    t.notMatch(await stdoutOf(jobId), /"status":"interrupted"/);
    await waitUntilGone(pid);
  });

  t.test(`${engine}: a live process that dies in a turn fails the job with ENGINE_EXIT_NONZERO and its stderr`, async (t) => {
    const { jobId } = await started(engine, 'exit1');
    t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'ENGINE_EXIT_NONZERO', message: /exited with code 1: fatal: engine crashed/ } });
  });

  t.test(`${engine}: a turn the engine reports as failed is ENGINE_TURN_FAILED with its reason`, async (t) => {
    const { jobId, pid } = await started(engine, 'model_error');
    t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'ENGINE_TURN_FAILED', message: /bad request from the model/ } });
    await waitUntilGone(pid);
  });

  t.test(`${engine}: a reply that starts with dashes arrives verbatim, in the same process`, async (t) => {
    const { jobId, pid, workspace } = await started(engine, 'ask');
    await waitForStatus(client, jobId, ['waiting_user']);
    t.ok(alive(pid));
    await client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: '--help me' });
    t.match(await waitForStatus(client, jobId), { status: 'succeeded' });
    t.match(await client.request('jobs/result', { job_id: jobId }), { output: { greeting: 'g', reply: '--help me' } });
    const calls = (await readFile(join(workspace, '.fake-engine', 'calls.ndjson'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { pid: number; prompt: string });
    t.same(calls.map((c) => c.pid), [pid, pid]);
    await waitUntilGone(pid);
  });
}
