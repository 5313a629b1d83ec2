import t from 'tap';
import { join } from 'node:path';
import { realEngineBins } from '../fixtures/engine-homes.js';
import { ROOT, waitForStatus, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';
import { HOMES, realEngineRig, type RealEngine } from '../helpers/real-engine-runs.js';

/**
 * The agent's words as the real CLIs print them, offline against the scripted model: `message`
 * events and text logs of a one-shot turn and of a live session's turns.
 */
const bins = realEngineBins(join(ROOT, 'node_modules'));
// Gemini alone takes 5 to 20 s a turn on a busy machine.
t.setTimeout(300_000);

const DONE = 'Here you are.\n```json\n{"greeting":"from a real CLI","__SKILL_DONE__":true}\n```';

for (const engine of Object.keys(HOMES) as RealEngine[]) {
  const bin = bins[engine];
  const skip = bin === null ? `the real ${engine} CLI is not installed in node_modules (npm ci installs it as a dev dependency); these tests did NOT run` : false;

  t.test(`real ${engine}: a one-shot turn's answer is a message event and the text of its log`, { skip }, async (t) => {
    const { daemon, client } = await realEngineRig(t, engine, bin as string, engine === 'gemini' ? { profile: 'resumable' } : {});
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, input: { scenario: 'ok' } });
    const trail = await EventTrail.follow(daemon, job.job_id);
    await trail.finished();
    t.match(await client.request('jobs/get', { job_id: job.job_id }), { status: 'succeeded' });
    t.same(trail.of('message').map((e) => e.data['text']), [DONE]);
    t.match(await client.request('jobs/logs', { job_id: job.job_id, format: 'text' }), { data: `${DONE}\n`, eof: true });
  });

  t.test(`real ${engine}: a live session's question and answer are message events and the text of each attempt`, { skip }, async (t) => {
    const { daemon, client } = await realEngineRig(t, engine, bin as string, { profile: 'sticky_process' });
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
    const trail = await EventTrail.follow(daemon, job.job_id);
    const waiting = await waitForStatus(client, job.job_id, ['waiting_user', 'failed', 'succeeded']);
    t.equal(waiting.status, 'waiting_user', JSON.stringify(waiting.error));
    await client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'Rome' });
    await trail.finished();
    const answer = DONE.replace('"greeting":"from a real CLI"', '"greeting":"from a real CLI","reply":"Rome"');
    t.same(trail.of('message').map((e) => e.data['text']), ['Which city should I use?', answer]);
    t.match(await client.request('jobs/logs', { job_id: job.job_id, attempt: 1, format: 'text' }), { data: 'Which city should I use?\n' });
    t.match(await client.request('jobs/logs', { job_id: job.job_id, attempt: 2, format: 'text' }), { data: `${answer}\n` });
  });
}
