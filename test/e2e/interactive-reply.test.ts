// Replies and resumes of the resumable profile through the real daemon: probe, session handles,
// resume argv, new processes, resume failure, what a reply turn sends, jobs/reply errors and
// idempotency, and the input_required event (PR-1, PR-3..PR-10, PR-14, TP-9,
// TP-11, TP-13, TP-14, D-5, API-3, API-4, API-9, API-10, LC-7).
import t from 'tap';
import { readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jobProcesses } from '../helpers/job-processes.js';
import { ENGINE_NAMES, TestDaemon, alive, processOf, rpcError, waitForStatus, type JobView, type TestEngine } from '../helpers/daemon.js';
import type { InteractionView } from '../../clients/wire.js';
import { EventTrail } from '../helpers/event-trail.js';

interface Job extends JobView {
  attempt: number;
  interactive_profile: { kind: string; reason: string } | null;
  session_handle: { engine: string; handle_type: string; handle_value: string } | null;
  pending_interaction_id: number | null;
}
t.jobs = 3;
const daemon = await TestDaemon.start({ config: { max_concurrent: 8 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function createInteractive(engine: TestEngine, input: Record<string, unknown>): Promise<Job> {
  return client.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input });
}
async function untilWaiting(jobId: string): Promise<Job> {
  return (await waitForStatus(client, jobId, ['waiting_user', 'succeeded', 'failed', 'canceled'])) as Job;
}
function reply(jobId: string, interactionId: number, response: unknown, idempotencyKey?: string): Promise<{ job_id: string; status: string; accepted: boolean }> {
  return client.request('jobs/reply', { job_id: jobId, interaction_id: interactionId, response, ...(idempotencyKey === undefined ? {} : { idempotency_key: idempotencyKey }) });
}
function sessionFile(jobId: string, id: string): string {
  return join(daemon.runDir(jobId), 'workspace', '.fake-engine', 'sessions', `${id}.json`);
}

/**
 * The exact argv the fake must see, after the configured command (docs/engines.md, the argv
 * table): the prompt goes on stdin, off every command line, for every engine that reads it there.
 */
const ARGV: Record<'codex' | 'gemini' | 'iflow' | 'claude', { start: (prompt: string) => string[]; resume: (id: string, prompt: string) => string[] }> = {
  codex: {
    start: () => ['exec', '--skip-git-repo-check', '--json', '--yolo', '--', '-'],
    resume: (id: string) => ['exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', '--', id, '-'],
  },
  gemini: {
    start: () => ['--yolo', '--output-format', 'json'],
    resume: (id: string) => [`--resume=${id}`, '--yolo', '--output-format', 'json'],
  },
  iflow: {
    start: (prompt: string) => ['--yolo', '--thinking', `--prompt=${prompt}`],
    resume: (id: string, prompt: string) => ['--resume', id, '--yolo', '--thinking', `--prompt=${prompt}`],
  },
  claude: {
    start: () => ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'],
    resume: (id: string) => ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', `--resume=${id}`],
  },
};

/** Session id formats of the real CLIs, as the fakes print them (fixtures README). */
const SESSION_ID = {
  codex: /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  gemini: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  iflow: /^session-[0-9a-f]{32}$/,
  claude: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
} as const;

const IDS = {
  codex: 'PR-4 PR-8 TP-13',
  gemini: 'PR-5 PR-9 TP-9',
  iflow: 'PR-6 PR-10 TP-11',
  // Claude Code came after the requirement scenarios: it has no ids of its own.
  claude: '',
} as const;

t.test('PR-1 engines/list reports the resumable profile with a reason for every fake engine (the probe passes)', async (t) => {
  const { engines } = await client.request<{ engines: Array<{ name: string; available: boolean; interactive_profile: { kind: string; reason: string } }> }>('engines/list');
  t.same(engines.map((e) => e.name).sort(), [...ENGINE_NAMES].sort());
  for (const engine of engines) {
    t.equal(engine.interactive_profile.kind, 'resumable', `${engine.name}: resumable`);
    t.type(engine.interactive_profile.reason, 'string');
    t.ok(engine.interactive_profile.reason.length > 0, `${engine.name}: a reason is given`);
  }
});

for (const engine of ENGINE_NAMES) {
  t.test(`PR-1 PR-3 PR-7 TP-14 ${IDS[engine]} TP-1 D-5 API-4 ${engine}: the handle is the engine's session id, stored while waiting; a free-text reply to the choose_one hint runs a new process with the exact resume argv`, async (t) => {
    const { engines } = await client.request<{ engines: Array<{ name: string; interactive_profile: unknown }> }>('engines/list');
    const created = await createInteractive(engine, { scenario: 'ask', emit: { greeting: engine } });
    t.same(created.interactive_profile, engines.find((e) => e.name === engine)?.interactive_profile, 'PR-1 the job carries the probed profile');
    t.equal(created.interactive_profile?.kind, 'resumable');
    t.equal(created.session_handle, null, 'no handle before the first turn');

    const waiting = await untilWaiting(created.job_id);
    t.equal(waiting.status, 'waiting_user', JSON.stringify(waiting.error));
    t.same(
      (await client.request<{ pending: unknown }>('jobs/pending', { job_id: created.job_id })).pending,
      { interaction_id: 1, prompt: 'Which city should I use?', kind: 'choose_one', options: [{ label: 'Paris', value: 'paris' }, { label: 'Rome', value: 'rome' }] },
      'D-5 a well-formed hint gives the prompt, kind and options (not the text before the block)',
    );
    const [first] = await daemon.engineCalls(created.job_id);
    const prompt = await readFile(join(daemon.runDir(created.job_id), 'attempts', '1', 'prompt.txt'), 'utf8');
    t.same(first?.argv, ARGV[engine].start(prompt), 'start argv carries the auto-execution flags (and iFlow\'s prompt)');
    t.equal(first?.prompt, prompt, 'the prompt reached the engine verbatim');
    t.equal(first?.resume, false);
    const sessionId = first?.session ?? '';
    t.match(sessionId, SESSION_ID[engine], 'the fake printed a session id in the real format');
    t.same(waiting.session_handle, { engine, handle_type: 'session_id', handle_value: sessionId }, 'PR-3 the handle is stored while waiting and equals the engine session id');
    t.ok(existsSync(sessionFile(created.job_id, sessionId)), 'the session exists on the engine side');
    t.same(jobProcesses(created.job_id), [], 'PR-7 no engine process stays resident while a resumable job waits');

    // API-4: kind is advisory; free text outside the options, even one that looks like an option flag, is accepted.
    const replyText = '--help me, neither: use Berlin';
    await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: replyText });
    const done = (await waitForStatus(client, created.job_id)) as Job;
    t.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const calls = await daemon.engineCalls(created.job_id);
    t.equal(calls.length, 2, 'exactly one resume turn');
    const second = calls[1];
    t.equal(second?.resume, true, 'the second turn resumes');
    t.equal(second?.session, sessionId, 'PR-3 the resume uses exactly the stored handle');
    t.not(processOf(second), processOf(first), 'PR-7 a new process');
    t.same(second?.argv, ARGV[engine].resume(sessionId, replyText), 'TP-14 the resume argv: handle from the previous turn, auto-execution flags kept');
    t.equal(second?.prompt, replyText, 'the reply reached the engine verbatim');
    t.equal(await readFile(join(daemon.runDir(created.job_id), 'attempts', '2', 'prompt.txt'), 'utf8'), replyText, 'the reply turn prompt is the reply text');
    t.same((await client.request<{ output: unknown }>('jobs/result', { job_id: created.job_id })).output, { greeting: engine, reply: replyText }, 'a reply that looks like an option reached the agent verbatim');
    t.same(done.session_handle, waiting.session_handle, 'the handle is unchanged after the resumed turn');
  });
}

t.test('PR-14 a resume whose session the engine does not know fails with SESSION_RESUME_FAILED', async (t) => {
  // gemini is covered by the same case in interactive-slots.test.ts
  await Promise.all(
    (['codex', 'iflow'] as const).map(async (engine) => {
      const created = await createInteractive(engine, { scenario: 'ask' });
      const waiting = await untilWaiting(created.job_id);
      t.equal(waiting.status, 'waiting_user', `${engine}: waiting`);
      const handle = waiting.session_handle?.handle_value ?? '';
      await rm(sessionFile(created.job_id, handle));
      await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
      const done = (await waitForStatus(client, created.job_id)) as Job;
      t.equal(done.status, 'failed', `${engine}: failed`);
      t.equal(done.error?.code, 'SESSION_RESUME_FAILED', `${engine}: SESSION_RESUME_FAILED (${done.error?.message ?? ''})`);
      const calls = await daemon.engineCalls(created.job_id);
      t.equal(calls.length, 2, `${engine}: one resume attempt`);
      t.match(calls[1], { resume: true, session: handle }, `${engine}: it tried the stored handle`);
      t.match(await client.request('jobs/result', { job_id: created.job_id }), { status: 'failed', output: null, error: { code: 'SESSION_RESUME_FAILED' } }, `${engine}: jobs/result`);
    }),
  );
});

t.test('API-9 API-10 LC-7 free text and a JSON object are both accepted; the object reaches the engine as its JSON text; history keeps every round', async (t) => {
  const created = await createInteractive('codex', { scenario: 'ask_twice' });
  await untilWaiting(created.job_id);
  const before = Date.now();
  await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'free text answer' });
  const second = await untilWaiting(created.job_id);
  t.equal(second.status, 'waiting_user');
  t.equal(second.pending_interaction_id, 2);
  const object = { city: 'rome', days: 3, ok: true, tags: ['a', 'b'], nested: { x: null } };
  await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 2, response: object });
  const done = await waitForStatus(client, created.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));

  const calls = await daemon.engineCalls(created.job_id);
  t.equal(calls.length, 3);
  t.equal(calls[1]?.prompt, 'free text answer', 'free text is sent as is');
  t.equal(calls[2]?.prompt, JSON.stringify(object), 'the object is sent as its JSON text');
  t.same(JSON.parse(calls[2]?.prompt ?? 'null'), object);
  t.same((await client.request<{ output: unknown }>('jobs/result', { job_id: created.job_id })).output, { greeting: 'hello', reply: JSON.stringify(object) });

  const { interactions } = await client.request<{ interactions: InteractionView[] }>('jobs/history', { job_id: created.job_id });
  t.equal(interactions.length, 2, 'LC-7 one entry per round');
  t.match(interactions, [
    { interaction_id: 1, prompt: 'Question 1?', kind: 'open_text', response: 'free text answer', resolution_mode: 'user_reply' },
    { interaction_id: 2, prompt: 'Question 2?', kind: 'open_text', response: object, resolution_mode: 'user_reply' },
  ]);
  t.same(interactions[1]?.response, object, 'API-9 the JSON reply is stored as JSON, not as a string');
  for (const round of interactions) {
    t.same(Object.keys(round).sort(), ['asked_at', 'interaction_id', 'kind', 'prompt', 'replied_at', 'resolution_mode', 'response'], `LC-7 round ${round.interaction_id} has exactly the documented fields`);
    const asked = Date.parse(round.asked_at);
    const replied = Date.parse(round.replied_at ?? '');
    t.ok(round.asked_at.endsWith('Z') && !Number.isNaN(asked), 'asked_at is ISO UTC');
    t.ok(round.replied_at?.endsWith('Z') && !Number.isNaN(replied), 'replied_at is ISO UTC');
    t.ok(replied >= asked, 'replied after asked');
  }
  t.ok(Date.parse(interactions[0]?.replied_at ?? '') >= before - 1000, 'replied_at is the reply time');
  t.ok(Date.parse(interactions[1]?.asked_at ?? '') >= Date.parse(interactions[0]?.replied_at ?? ''), 'round 2 was asked after round 1 was answered');
});

t.test('API-4 JOB_NOT_INTERACTIVE: an auto job takes no reply', async (t) => {
  const created = await client.request<Job>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: { scenario: 'ok' } });
  const error = await rpcError(reply(created.job_id, 1, 'hello'));
  t.equal(error.dataCode, 'JOB_NOT_INTERACTIVE');
  t.equal(error.rpcCode, 2002);
  t.equal((await waitForStatus(client, created.job_id)).status, 'succeeded', 'the job is not disturbed');
  t.equal((await rpcError(reply(created.job_id, 1, 'hello'))).dataCode, 'JOB_NOT_INTERACTIVE', 'also once finished');
});

t.test('API-4 JOB_NOT_WAITING: replying to a running or a finished interactive job', async (t) => {
  const running = await createInteractive('iflow', { scenario: 'hang' });
  await waitForStatus(client, running.job_id, ['running']);
  const error = await rpcError(reply(running.job_id, 1, 'too early'));
  t.equal(error.dataCode, 'JOB_NOT_WAITING', 'running');
  t.equal(error.rpcCode, 2003);
  t.match(await client.request('jobs/pending', { job_id: running.job_id }), { status: 'running', pending: null });
  await client.request('jobs/cancel', { job_id: running.job_id });
  t.equal((await rpcError(reply(running.job_id, 1, 'too late'))).dataCode, 'JOB_NOT_WAITING', 'canceled');

  const finished = await createInteractive('gemini', { scenario: 'ok' });
  t.equal((await waitForStatus(client, finished.job_id)).status, 'succeeded');
  t.equal((await rpcError(reply(finished.job_id, 1, 'too late'))).dataCode, 'JOB_NOT_WAITING', 'succeeded');
  t.equal((await daemon.engineCalls(finished.job_id)).length, 1, 'no turn was started by the refused reply');
});

t.test('API-4 INTERACTION_STALE: a wrong interaction_id is refused and the details name the pending one; idempotent retries never start a second turn; IDEMPOTENCY_CONFLICT on another response', async (t) => {
  const created = await createInteractive('codex', { scenario: 'ask_twice' });
  const first = await untilWaiting(created.job_id);
  t.equal(first.pending_interaction_id, 1);

  const stale = await rpcError(reply(created.job_id, 2, 'from the future'));
  t.equal(stale.dataCode, 'INTERACTION_STALE');
  t.equal(stale.rpcCode, 2004);
  t.match(stale.details, { pending_interaction_id: 1 }, 'details carry the pending id');
  t.match(await client.request('jobs/get', { job_id: created.job_id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'a refused reply changes nothing');

  const accepted = await reply(created.job_id, 1, 'answer one', 'key-1');
  t.same(accepted, { job_id: created.job_id, status: 'queued', accepted: true }, 'first use of the key: accepted, the job queues to resume');
  const retried = await reply(created.job_id, 1, 'answer one', 'key-1');
  t.match(retried, { job_id: created.job_id, accepted: true }, 'the same key and response at once: accepted again');

  const second = await untilWaiting(created.job_id);
  t.equal(second.status, 'waiting_user');
  t.equal(second.pending_interaction_id, 2);
  t.equal((await daemon.engineCalls(created.job_id)).length, 2, 'one resume turn for the two deliveries');

  t.same(await reply(created.job_id, 1, 'answer one', 'key-1'), { job_id: created.job_id, status: 'waiting_user', accepted: true }, 'a late retry is still accepted');
  t.equal((await daemon.engineCalls(created.job_id)).length, 2, 'and starts no turn');
  t.match(await client.request('jobs/pending', { job_id: created.job_id }), { pending: { interaction_id: 2, prompt: 'Question 2?' } }, 'the pending round is untouched');

  const conflict = await rpcError(reply(created.job_id, 1, 'another answer', 'key-1'));
  t.equal(conflict.dataCode, 'IDEMPOTENCY_CONFLICT');
  t.equal(conflict.rpcCode, 2005);
  t.equal((await rpcError(reply(created.job_id, 2, 'another answer', 'key-1'))).dataCode, 'IDEMPOTENCY_CONFLICT', 'also when aimed at the current round');

  const old = await rpcError(reply(created.job_id, 1, 'answer one again'));
  t.equal(old.dataCode, 'INTERACTION_STALE', 'a reply to an answered round (without key) is stale');
  t.match(old.details, { pending_interaction_id: 2 });

  t.match(await reply(created.job_id, 2, { choice: 'b' }, 'key-2'), { accepted: true });
  t.equal((await waitForStatus(client, created.job_id)).status, 'succeeded');
  t.match(await reply(created.job_id, 2, { choice: 'b' }, 'key-2'), { status: 'succeeded', accepted: true }, 'a retry after the job finished is accepted');
  t.equal((await daemon.engineCalls(created.job_id)).length, 3, 'three turns in all');
  const history = await client.request<{ interactions: Array<{ response: unknown }> }>('jobs/history', { job_id: created.job_id });
  t.same(history.interactions.map((i) => i.response), ['answer one', { choice: 'b' }], 'history holds the first delivery of each round only');
  t.notOk(JSON.stringify(history).includes('key-1'), 'idempotency keys are not exposed in history');
});

t.test('API-3 an input_required event carries the persisted pending, after the status_changed to waiting_user, once per round', async (t) => {
  const created = await createInteractive('gemini', { scenario: 'ask' });
  const trail = await EventTrail.follow(daemon, created.job_id);
  await untilWaiting(created.job_id);
  const { pending } = await client.request<{ pending: unknown }>('jobs/pending', { job_id: created.job_id });
  await trail.until((e) => e.type === 'input_required');
  const events = trail.events;
  const toWaiting = events.findIndex((e) => e.type === 'status_changed' && e.data['to'] === 'waiting_user');
  const inputRequired = events.findIndex((e) => e.type === 'input_required');
  t.ok(toWaiting >= 0, 'status_changed to waiting_user');
  t.ok(inputRequired > toWaiting, 'input_required comes after it');
  t.same(events[inputRequired]?.data, { pending }, 'and carries exactly the persisted pending');
  t.match(events[toWaiting]?.data, { from: 'running', to: 'waiting_user' });

  await reply(created.job_id, 1, 'Paris');
  await waitForStatus(client, created.job_id);
  await trail.finished();
  const all = trail.events;
  t.same(all.map((e) => e.seq), all.map((_, i) => i + 1), 'seq has no gaps');
  t.equal(all.filter((e) => e.type === 'input_required').length, 1, 'one input_required for one question');
  t.same(
    all.filter((e) => e.type === 'status_changed').map((e) => e.data),
    [
      { from: null, to: 'queued' },
      { from: 'queued', to: 'running' },
      { from: 'running', to: 'waiting_user' },
      { from: 'waiting_user', to: 'queued' },
      { from: 'queued', to: 'running' },
      { from: 'running', to: 'succeeded' },
    ],
  );
  t.match(all.at(-1), { type: 'finished', data: { status: 'succeeded', error: null } });
});
