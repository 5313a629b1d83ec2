// engines.<name>.sticky_recovery "resume": a waiting sticky job whose live process is lost (killed,
// or gone while no daemon was there) keeps waiting, and the reply resumes its stored session in a new
// one-shot process. The default ("fail") is INTERACTION_PROCESS_LOST: sticky.test.ts, recovery.test.ts.
import t from 'tap';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { ENGINE_NAMES, FIXTURES, TestDaemon, processOf, waitForFile, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';

const config = {
  max_concurrent: 2,
  kill_grace_ms: 300,
  engines: Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)], profile: 'sticky_process', sticky_recovery: 'resume' }])),
};
const daemon = await TestDaemon.start({ config });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function waiting(engine: string, extra: Record<string, unknown> = {}, scenario = 'ask'): Promise<{ job: JobView; pid: number }> {
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario, emit: { greeting: 'g' } }, ...extra });
  const job = await waitForStatus(client, created.job_id, ['waiting_user']);
  return { job, pid: await daemon.enginePid(job.job_id) };
}

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: a killed live process leaves the job waiting; the reply resumes the stored session in a new process`, async (t) => {
    const { job, pid } = await waiting(engine);
    const trail = await EventTrail.follow(daemon, job.job_id);
    const session = (job['session_handle'] as { handle_value: string }).handle_value;
    process.kill(pid, 'SIGKILL');
    await trail.until((event) => event.type === 'warning' && event.data['code'] === 'INTERACTION_PROCESS_RESCUED');
    const rescued = await client.request<JobView>('jobs/get', { job_id: job.job_id });
    t.match(rescued, { status: 'waiting_user', pending_interaction_id: 1, wait_deadline_at: null, warnings: ['INTERACTION_PROCESS_RESCUED'] }, 'a strict wait now waits without a deadline, as a resumable one');
    t.match(rescued['interactive_profile'], { kind: 'resumable', reason: new RegExp(`sticky_recovery "resume": the live engine process was killed by SIGKILL; each reply resumes session ${session}`) });
    t.match(await client.request('daemon/status'), { slots: { used: 0 } }, 'no process, no slot');
    await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: '--Rome' });
    const done = await waitForStatus(client, job.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'g', reply: '--Rome' } });
    const calls = await daemon.engineCalls(job.job_id);
    t.equal(calls.length, 2);
    t.match(calls[1], { resume: true, session, prompt: '--Rome' }, 'the stored session, resumed');
    t.not(processOf(calls[1]), processOf(calls[0]), 'in a new process');
  });
}

t.test('a job waiting for an approval cannot be rescued: its turn died with the process', async (t) => {
  const { job, pid } = await waiting('codex', { approvals: 'ask' }, 'approve');
  process.kill(pid, 'SIGKILL');
  t.match(await waitForStatus(client, job.job_id), { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST', message: /went away while the job waited for an approval/ } });
});

t.test('a non-strict rescued wait keeps its deadline, and is auto-decided at it', async (t) => {
  // Long enough for the process to be killed on a busy machine before the deadline passes.
  const { job, pid } = await waiting('claude', { interactive_require_user_reply: false, session_timeout_sec: 5 });
  process.kill(pid, 'SIGKILL');
  await waitUntilGone(pid);
  const done = await waitForStatus(client, job.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  t.match(await client.request('jobs/history', { job_id: job.job_id }), { interactions: [{ resolution_mode: 'auto_decide_timeout' }] });
  t.match((await daemon.engineCalls(job.job_id))[1], { resume: true });
});

t.test('after a daemon restart that cannot take up its live process, a waiting sticky job is rescued, and continues with the reply', async (t) => {
  const dir = await mkdtemp(join(daemon.dir, 'restart-'));
  const first = await TestDaemon.start({ dir, config });
  const c1 = await first.client();
  const created = await c1.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'r' } } });
  await waitForStatus(c1, created.job_id, ['waiting_user']);
  const pid = await first.enginePid(created.job_id);
  await first.kill();
  // Its keeper and its engine are gone while no daemon is there (restarts-live.test.ts takes up those that are not).
  await first.killKeeper(created.job_id);
  process.kill(pid, 'SIGKILL');
  await waitUntilGone(pid);
  const again = await TestDaemon.start({ dir, config });
  t.teardown(() => again.cleanup());
  const c2 = await again.client();
  t.match(await c2.request('jobs/get', { job_id: created.job_id }), { status: 'waiting_user', warnings: ['INTERACTION_PROCESS_RESCUED'], interactive_profile: { kind: 'resumable', reason: /is gone: the daemon restarted/ } });
  await c2.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'after restart' });
  t.match(await waitForStatus(c2, created.job_id), { status: 'succeeded' });
  t.match(await c2.request('jobs/result', { job_id: created.job_id }), { output: { greeting: 'r', reply: 'after restart' } });
});
