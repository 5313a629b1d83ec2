import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jobProcesses } from '../helpers/job-processes.js';
import { ENGINE_NAMES, TestDaemon, alive, waitForFile, waitForStatus, type JobView } from '../helpers/daemon.js';

const daemon = await TestDaemon.start({ config: { max_concurrent: 4, kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function run(engine: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<JobView> {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input, ...extra });
  return waitForStatus(client, job.job_id);
}

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: LC-12 D-2 D-3 auto job succeeds with validated output, marker stripped`, async (t) => {
    const job = await run(engine, { scenario: 'ok', emit: { greeting: `hello from ${engine}` } });
    t.equal(job.status, 'succeeded');
    t.same(job.error, null);
    const result = await client.request<{ output: Record<string, unknown>; warnings: string[] }>('jobs/result', { job_id: job.job_id });
    t.same(result.output, { greeting: `hello from ${engine}` }, 'output is exactly the business fields');
    t.notOk('__SKILL_DONE__' in result.output, 'the done marker is not a business field');
    const calls = await daemon.engineCalls(job.job_id);
    t.equal(calls.length, 1, 'one engine process ran');
    const saved = await daemon.storedDoc<{ status: string }>(job.job_id, 'result');
    t.equal(saved?.status, 'succeeded', 'the result is stored with the job');
  });

  t.test(`${engine}: LC-12 D-2 auto job without the done marker still succeeds`, async (t) => {
    const job = await run(engine, { scenario: 'ok_plain', emit: { greeting: 'no marker' } });
    t.equal(job.status, 'succeeded');
    t.same(job.warnings, []);
  });

  t.test(`${engine}: output that breaks the schema fails with OUTPUT_INVALID`, async (t) => {
    const job = await run(engine, { scenario: 'ok', emit: { unexpected: 1 } });
    t.equal(job.status, 'failed');
    t.equal(job.error?.code, 'OUTPUT_INVALID');
    t.match(job.error?.message, /greeting/);
  });

  t.test(`${engine}: no JSON at all fails with OUTPUT_INVALID`, async (t) => {
    const job = await run(engine, { scenario: 'text' });
    t.equal(job.error?.code, 'OUTPUT_INVALID');
  });

  t.test(`${engine}: a non-zero exit fails with ENGINE_EXIT_NONZERO and keeps stderr`, async (t) => {
    const job = await run(engine, { scenario: 'exit1' });
    t.equal(job.status, 'failed');
    t.equal(job.error?.code, 'ENGINE_EXIT_NONZERO');
    t.match(job.error?.message, /code 1.*fatal: engine crashed/);
    const logs = await client.request<{ data: string; eof: boolean }>('jobs/logs', { job_id: job.job_id, stream: 'stderr' });
    t.match(logs.data, /fatal: engine crashed/);
    t.equal(logs.eof, true);
  });

  t.test(`${engine}: cancel stops the whole process group and leaves no process behind`, async (t) => {
    const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario: 'hang' } });
    await waitForStatus(client, created.job_id, ['running']);
    const childPid = await daemon.enginePid(created.job_id, 'child-pid');
    const pid = await daemon.enginePid(created.job_id);
    t.ok(alive(pid) && alive(childPid), 'engine and its child run');
    const answer = await client.request<{ status: string; accepted: boolean }>('jobs/cancel', { job_id: created.job_id });
    t.same(answer, { job_id: created.job_id, status: 'canceled', accepted: true });
    const job = await client.request<JobView>('jobs/get', { job_id: created.job_id });
    t.equal(job.error?.code, 'CANCELED_BY_USER');
    t.notOk(alive(pid), 'engine is gone');
    t.notOk(alive(childPid), 'its child is gone too');
    const again = await client.request<{ accepted: boolean }>('jobs/cancel', { job_id: created.job_id });
    t.equal(again.accepted, false, 'a second cancel is not accepted');
  });

}

t.test('a turn past hard_timeout_sec is stopped and fails with TIMEOUT, on every engine', async (t) => {
  // One job per engine at once, a slot each: the limits run out together.
  const created = await Promise.all(ENGINE_NAMES.map((engine) => client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario: 'hang_stubborn' }, hard_timeout_sec: 3 })));
  for (const [i, engine] of ENGINE_NAMES.entries()) {
    const jobId = (created[i] as JobView).job_id;
    // No pid is read: on a busy machine the engine may start only as the limit passes.
    const job = await waitForStatus(client, jobId);
    t.match(job, { status: 'failed', error: { code: 'TIMEOUT' } }, engine);
    t.same(jobProcesses(jobId), [], `${engine}: a process that ignores SIGTERM is killed after the grace period`);
  }
});

// Under process-group containment, job marks are what lead to these tools (test/e2e/containment.test.ts has the cgroup side).
t.test('process_group containment', async (t) => {
  // A grace period no busy machine outlasts: the engines here end at SIGTERM (term_escape starts its tool then).
  const groups = await TestDaemon.start({ config: { kill_grace_ms: 60_000, process_containment: 'process_group' } });
  t.teardown(() => groups.cleanup());
  const c = await groups.client();

  t.test('cancel stops a tool that left the group and lost its parent: its job mark finds it', async (t) => {
    const created = await c.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang_orphan' } });
    const orphan = await groups.enginePid(created.job_id, 'orphan-pid');
    await groups.enginePid(created.job_id, 'child-pid');
    t.ok(alive(orphan), 'the orphaned tool runs');
    t.ok((await readFile(`/proc/${orphan}/environ`, 'utf8')).split('\0').includes(`SKILLD_JOB_ID=${created.job_id}`), 'it inherited its job mark');
    t.match(await c.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
    t.notOk(alive(orphan), 'the orphaned tool is gone when the cancel answers');
  });

  t.test('a tool started while the engine is being stopped is gone when the cancel answers', async (t) => {
    const created = await c.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'term_escape' } });
    const fake = join(groups.runDir(created.job_id), 'workspace', '.fake-engine');
    await groups.enginePid(created.job_id, 'child-pid');
    t.match(await c.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
    const escaped = Number(await readFile(join(fake, 'orphan-pid'), 'utf8'));
    t.ok(escaped > 0, 'the engine started a tool as it was stopped');
    t.same(jobProcesses(created.job_id), [], 'that tool is gone too: nothing of the job is left');
  });
});

t.test('a missing engine executable fails with ENGINE_SPAWN_FAILED naming it and ENOENT, and frees its slot', async (t) => {
  const broken = await TestDaemon.start({ config: { max_concurrent: 1, engines: { codex: { command: ['/nonexistent/codex'] } } } });
  t.teardown(() => broken.cleanup());
  const c = await broken.client();
  const created = await c.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} });
  const job = await waitForStatus(c, created.job_id);
  t.same(job.error, { code: 'ENGINE_SPAWN_FAILED', message: 'cannot start /nonexistent/codex: ENOENT' }, 'the executable and the OS error code, not the command line');
  const status = await c.request<{ slots: { used: number; queued: number } }>('daemon/status');
  t.same(status.slots, { max: 1, used: 0, queued: 0 });
});

t.test('an output line over the cap is dropped and the turn still completes', async (t) => {
  const job = await run('codex', { scenario: 'big_line', emit: { greeting: 'after the big line' } });
  t.equal(job.status, 'succeeded');
});

t.test('UTF-8 split across chunk boundaries decodes intact', async (t) => {
  const job = await run('gemini', { scenario: 'utf8', emit: { greeting: 'hi' } });
  const result = await client.request<{ output: { text: string } }>('jobs/result', { job_id: job.job_id });
  t.equal(result.output.text, 'héllo wörld ✓ 你好');
});

t.test('every slot is free again after success, failure, cancel and timeout', async (t) => {
  const status = await client.request<{ slots: { used: number; queued: number } }>('daemon/status');
  t.equal(status.slots.used, 0);
  t.equal(status.slots.queued, 0);
});
