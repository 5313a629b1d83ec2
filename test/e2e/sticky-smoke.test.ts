import t from 'tap';
import { ENGINE_NAMES, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';

const stickyEnv = { FAKE_ENGINE_NO_RESUME: '1', FAKE_ENGINE_STICKY: '1' };
const daemon = await TestDaemon.start({ config: { engines: Object.fromEntries(ENGINE_NAMES.map((n) => [n, { command: [`${process.cwd()}/test/fixtures/fake-${n}.mjs`], env: stickyEnv }])) } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: sticky ask, reply, same process`, async (t) => {
    const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'hi' } } });
    t.match(created.interactive_profile, { kind: 'sticky_process' });
    const waiting = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
    t.equal(waiting.status, 'waiting_user', JSON.stringify(waiting.error));
    t.match(await client.request('daemon/status'), { slots: { used: 1 } });
    await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
    const done = await waitForStatus(client, created.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    t.match(await client.request('jobs/result', { job_id: created.job_id }), { output: { greeting: 'hi', reply: 'Rome' } });
    const calls = await daemon.engineCalls(created.job_id);
    t.equal(calls.length, 2);
    t.equal(calls[0]?.pid, calls[1]?.pid);
    t.match(await client.request('daemon/status'), { slots: { used: 0 } });
  });
}
