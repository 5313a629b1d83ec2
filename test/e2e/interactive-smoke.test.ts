import t from 'tap';
import { ENGINE_NAMES, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';

const daemon = await TestDaemon.start();
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: ask, reply, resume`, async (t) => {
    const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'hi' } } });
    const waiting = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
    t.equal(waiting.status, 'waiting_user', JSON.stringify(waiting.error));
    const pending = await client.request<{ pending: { interaction_id: number; prompt: string } }>('jobs/pending', { job_id: created.job_id });
    t.match(pending.pending, { interaction_id: 1, prompt: 'Which city should I use?', kind: 'choose_one' });
    await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
    const done = await waitForStatus(client, created.job_id);
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    t.match(await client.request('jobs/result', { job_id: created.job_id }), { output: { greeting: 'hi', reply: 'Rome' } });
    const calls = await daemon.engineCalls(created.job_id);
    t.equal(calls.length, 2);
    t.not(calls[0]?.pid, calls[1]?.pid);
    t.equal(calls[1]?.resume, true);
    t.match(await client.request('jobs/history', { job_id: created.job_id }), { interactions: [{ interaction_id: 1, response: 'Rome', resolution_mode: 'user_reply' }] });
  });
}
