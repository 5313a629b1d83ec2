import t from 'tap';
import { join } from 'node:path';
import { FIXTURES, TestDaemon, alive, waitForFile, waitForStatus, type JobView } from '../helpers/daemon.js';

const engines = {
  codex: { command: [join(FIXTURES, 'fake-codex.mjs')] },
  gemini: { command: [join(FIXTURES, 'fake-gemini.mjs')], env: { FAKE_ENGINE_NO_RESUME: '1' } },
  iflow: { command: [join(FIXTURES, 'fake-iflow.mjs')] },
};

// Process groups and job marks: the cgroup side of recovery is in containment.test.ts.
const config = { max_concurrent: 2, kill_grace_ms: 300, engines, process_containment: 'process_group' };

t.test('restart after SIGKILL: each job lands in its recovery state (docs/state.md) and no engine process that cannot be taken up survives', async (t) => {
  const daemon = await TestDaemon.start({ config });
  const client = await daemon.client();
  const create = (params: Record<string, unknown>): Promise<JobView> => client.request<JobView>('jobs/create', params);
  const resumable = await create({ skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'r' } } });
  await waitForStatus(client, resumable.job_id, ['waiting_user']);
  const sticky = await create({ skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 's' } } });
  await waitForStatus(client, sticky.job_id, ['waiting_user']);
  // Its engine left a tool in its own session whose parent is gone: only the job mark leads to it.
  const running = await create({ skill_id: 'echo-auto', engine: 'iflow', input: { scenario: 'hang_orphan' } });
  await waitForStatus(client, running.job_id, ['running']);
  const queued = await create({ skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'q' } } });
  t.equal(queued.status, 'queued');
  t.match(await client.request('daemon/status'), { slots: { max: 2, used: 2, queued: 1 } });

  const before = [await daemon.enginePid(running.job_id), await daemon.enginePid(running.job_id, 'child-pid'), await daemon.enginePid(running.job_id, 'orphan-pid'), await daemon.enginePid(sticky.job_id)];
  t.ok(before.every(alive), 'engine processes run before the crash');

  await daemon.kill();
  // Their keepers are gone without their engines' status: neither can be taken up (restarts*.test.ts have those that can).
  await daemon.killKeeper(running.job_id);
  await daemon.killKeeper(sticky.job_id);
  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.cleanup());
  const c = await again.client();
  // A job under recovery is shown once it is recovered.
  t.match(await c.request('jobs/get', { job_id: running.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } });
  t.match(await c.request('jobs/get', { job_id: sticky.job_id }), { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST' } });
  t.ok(before.every((pid) => !alive(pid)), 'no engine process from before is alive once their jobs are settled');
  t.match(await c.request('jobs/get', { job_id: resumable.job_id }), { status: 'waiting_user', pending_interaction_id: 1 });
  t.equal((await waitForStatus(c, queued.job_id)).status, 'succeeded', 'the queued job runs after the restart');
  await c.request('jobs/reply', { job_id: resumable.job_id, interaction_id: 1, response: 'after restart' });
  t.equal((await waitForStatus(c, resumable.job_id)).status, 'succeeded', 'the resumable job continues after the restart');
  t.match(await c.request('daemon/status'), { slots: { used: 0, queued: 0 } });
});
