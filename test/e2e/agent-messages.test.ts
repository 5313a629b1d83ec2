// What the agent says reaches clients as text: one `message` event per message, and jobs/logs
// with format "text", for every engine, in one-shot turns and in live sessions.
import t from 'tap';
import { join } from 'node:path';
import { ENGINE_NAMES, FIXTURES, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';

const DONE = 'Done.\n```json\n{"greeting": "hello", "__SKILL_DONE__": true}\n```';
const QUESTION = /^I need one detail before I continue\.\n<ASK_USER_YAML>\nprompt: Which city should I use\?/;

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

// The fakes fail the resume probe with FAKE_ENGINE_NO_RESUME: interactive jobs then run in live sessions.
const engines = Object.fromEntries(ENGINE_NAMES.map((n) => [n, { command: [join(FIXTURES, `fake-${n}.mjs`)], env: { FAKE_ENGINE_NO_RESUME: '1' } }]));
const live = await TestDaemon.start({ config: { kill_grace_ms: 300, engines } });
t.teardown(() => live.cleanup());
const liveClient = await live.client();

for (const engine of ENGINE_NAMES) {
  t.test(`${engine}: a one-shot turn's message is one message event, before the job finishes; logs give it as text`, async (t) => {
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario: 'ok' } });
    const trail = await EventTrail.follow(daemon, job.job_id);
    await trail.finished();
    t.same(trail.of('message').map((e) => e.data), [{ text: DONE }]);
    const types = trail.events.map((e) => e.type);
    t.ok(types.indexOf('message') < types.indexOf('finished'));
    t.match(await client.request('jobs/logs', { job_id: job.job_id, format: 'text' }), { attempt: 1, data: `${DONE}\n`, eof: true });
  });

  t.test(`${engine}: a live session's messages, question and answer, are message events; each attempt's logs as text`, async (t) => {
    const created = await liveClient.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
    const trail = await EventTrail.follow(live, created.job_id);
    const waiting = await waitForStatus(liveClient, created.job_id, ['waiting_user']);
    t.match(waiting, { interactive_profile: { kind: 'sticky_process' } });
    await trail.until((e) => e.type === 'message');
    await liveClient.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
    await trail.finished();
    const said = trail.of('message').map((e) => String(e.data['text']));
    t.equal(said.length, 2, said.join('\n---\n'));
    t.equal(said[0], 'I need one detail before I continue.', 'the message leaves out the hint block: the question comes as input_required');
    t.equal(said[1], 'Done.\n```json\n{"greeting": "hello", "reply": "Rome", "__SKILL_DONE__": true}\n```');
    const first = await liveClient.request<{ data: string }>('jobs/logs', { job_id: created.job_id, attempt: 1, format: 'text' });
    t.match(first.data, QUESTION, 'the log keeps all the agent printed, the hint block too');
    const second = await liveClient.request<{ data: string }>('jobs/logs', { job_id: created.job_id, attempt: 2, format: 'text' });
    t.equal(second.data, `${said[1]}\n`);
  });
}
