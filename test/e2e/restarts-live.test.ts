// Restarts and live sessions (docs/restarts.md, "Live sessions"): a sticky job's one engine process
// outlives the daemon, waiting or in a turn, and the next daemon takes the session up by replaying
// its journal, for each engine's protocol (the fakes print what the real CLIs print).
import t from 'tap';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, RELEASE_FILE, TestDaemon, alive, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';

const LIVE_ENGINES = ['codex', 'gemini', 'iflow', 'claude'] as const;
const engines = Object.fromEntries(LIVE_ENGINES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)], profile: 'sticky_process' }]));
const config = { max_concurrent: 4, kill_grace_ms: 300, engines, engines_on_stop: 'keep' };

for (const engine of LIVE_ENGINES) {
  for (const how of ['SIGKILL', 'SIGTERM'] as const) {
    t.test(`${engine} (${how}): a live session waiting for a reply keeps its process; the reply reaches it after the restart`, async (t) => {
      const daemon = await TestDaemon.start({ config });
      t.teardown(() => daemon.cleanup());
      const client = await daemon.client();
      const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: `kept ${engine}` } } });
      await waitForStatus(client, job.job_id, ['waiting_user']);
      const pid = await daemon.enginePid(job.job_id);
      if (how === 'SIGKILL') await daemon.kill();
      else t.equal(await daemon.stop(), 0);
      t.ok(alive(pid), 'the live process goes on without a daemon');

      const again = await TestDaemon.start({ dir: daemon.dir, config });
      t.teardown(() => again.stop());
      const c = await again.client();
      t.match(await c.request('jobs/get', { job_id: job.job_id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'still waiting');
      t.match(await c.request('daemon/status'), { slots: { used: 1 } }, 'holding its slot');
      await c.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'after the restart' });
      const done = await waitForStatus(c, job.job_id);
      t.equal(done.status, 'succeeded');
      t.match(await c.request('jobs/result', { job_id: job.job_id }), { output: { greeting: `kept ${engine}` } });
      const calls = await again.engineCalls(job.job_id);
      t.same([calls.length, new Set(calls.map((call) => call.pid)).size], [2, 1], 'one engine process served both turns');
      const trail = await EventTrail.follow(again, job.job_id);
      await trail.finished();
      t.same(trail.statuses, ['queued', 'running', 'waiting_user', 'running', 'succeeded'], 'no state left for the restart');
    });
  }

  t.test(`${engine}: a live turn in flight at a crash goes on and ends as it would have, each output line told once`, async (t) => {
    const daemon = await TestDaemon.start({ config });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ok', release_file: RELEASE_FILE, emit: { greeting: `mid ${engine}` } } });
    await waitForStatus(client, job.job_id, ['running']);
    const pid = await daemon.enginePid(job.job_id);
    await (await EventTrail.follow(daemon, job.job_id)).until((e) => e.type === 'output');
    await daemon.kill();
    await daemon.release(job.job_id);

    const again = await TestDaemon.start({ dir: daemon.dir, config });
    t.teardown(() => again.stop());
    const c = await again.client();
    t.equal((await waitForStatus(c, job.job_id)).status, 'succeeded');
    t.match(await c.request('jobs/result', { job_id: job.job_id }), { output: { greeting: `mid ${engine}` } });
    await waitUntilGone(pid);
    const trail = await EventTrail.follow(again, job.job_id);
    await trail.finished();
    const told = trail.of('output').filter((e) => e.data['stream'] === 'stdout').map((e) => String(e.data['text']));
    const printed = (await readFile(join(again.runDir(job.job_id), 'engine', 'live.stdout'), 'utf8')).split('\n').slice(0, -1);
    t.same(told, printed, 'each line the engine printed is one output event, none lost, none doubled');
  });
}

for (const engine of LIVE_ENGINES) {
  t.test(`${engine}: a question pending an approval survives a crash; allow reaches the engine within the same turn`, async (t) => {
    const daemon = await TestDaemon.start({ config });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', approvals: 'ask', input: { scenario: 'approve', emit: { greeting: 'g' } } });
    await waitForStatus(client, job.job_id, ['waiting_user']);
    const pid = await daemon.enginePid(job.job_id);
    await daemon.kill();

    const again = await TestDaemon.start({ dir: daemon.dir, config });
    t.teardown(() => again.stop());
    const c = await again.client();
    t.match(await c.request('jobs/pending', { job_id: job.job_id }), { pending: { interaction_id: 1, kind: 'approval' } });
    await c.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'allow' });
    t.match(await waitForStatus(c, job.job_id), { status: 'succeeded', attempt: 1 }, 'the same turn went on');
    t.ok(existsSync(join(again.runDir(job.job_id), 'workspace', 'approved.txt')), 'the command ran once allowed');
    t.match(await c.request('jobs/result', { job_id: job.job_id }), { output: { approved: true } });
    await waitUntilGone(pid);
  });
}

for (const how of ['SIGKILL', 'SIGTERM'] as const) {
  t.test(`jobs in every state across a daemon ${how}: each ends exactly as it would have, every output line told once`, async (t) => {
    // Four slots, held by the running turns and the live sessions (a resumable job waits without
    // one): the sixth job queues behind them.
    const every = { ...config, max_concurrent: 4, engines: { ...engines, codex: { command: [join(FIXTURES, 'fake-codex.mjs')] } } };
    const daemon = await TestDaemon.start({ config: every });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    const create = (params: Record<string, unknown>): Promise<JobView> => client.request<JobView>('jobs/create', params);
    const running = await create({ skill_id: 'echo-auto', engine: 'codex', input: { release_file: RELEASE_FILE, emit: { greeting: 'running' } } });
    const resumable = await create({ skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'resumable' } } });
    const live = await create({ skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask', emit: { greeting: 'live' } } });
    const midTurn = await create({ skill_id: 'echo-both', engine: 'claude', execution_mode: 'interactive', input: { scenario: 'ok', release_file: RELEASE_FILE, emit: { greeting: 'mid' } } });
    const approval = await create({ skill_id: 'echo-both', engine: 'iflow', execution_mode: 'interactive', approvals: 'ask', input: { scenario: 'approve', emit: { greeting: 'approval' } } });
    await waitForStatus(client, resumable.job_id, ['waiting_user']);
    const queued = await create({ skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'queued' } } });
    for (const job of [running, midTurn]) await waitForStatus(client, job.job_id, ['running']);
    for (const job of [live, approval]) await waitForStatus(client, job.job_id, ['waiting_user']);
    for (const job of [running, midTurn]) await daemon.enginePid(job.job_id);
    // Should one of the four have ended (its slot freed), the message names it and its error.
    const views = await Promise.all([running, resumable, live, midTurn, approval, queued].map((job) => client.request<JobView & { error?: unknown }>('jobs/get', { job_id: job.job_id })));
    t.match(views.at(-1), { status: 'queued' }, `the sixth job waits for a slot; the jobs: ${views.map((view) => `${view.engine} ${view.status} ${JSON.stringify(view.error ?? null)}`).join('; ')}`);

    if (how === 'SIGKILL') await daemon.kill();
    else t.equal(await daemon.stop(), 0);
    for (const job of [running, midTurn]) await daemon.release(job.job_id);

    const again = await TestDaemon.start({ dir: daemon.dir, config: every });
    t.teardown(() => again.stop());
    const c = await again.client();
    await c.request('jobs/reply', { job_id: resumable.job_id, interaction_id: 1, response: 'r' });
    await c.request('jobs/reply', { job_id: live.job_id, interaction_id: 1, response: 'l' });
    await c.request('jobs/reply', { job_id: approval.job_id, interaction_id: 1, response: 'allow' });
    for (const job of [running, resumable, live, midTurn, approval, queued]) {
      const done = await waitForStatus(c, job.job_id);
      t.equal(done.status, 'succeeded', `${String(job['skill_id'])} ${job.engine}: ${JSON.stringify(done.error)}`);
      const trail = await EventTrail.follow(again, job.job_id);
      await trail.finished();
      t.notOk(trail.statuses.includes('failed'), 'no failure on the way');
    }
    for (const job of [running, midTurn]) {
      const trail = await EventTrail.follow(again, job.job_id);
      await trail.finished();
      const told = trail.of('output').filter((e) => e.data['stream'] === 'stdout').map((e) => String(e.data['text']));
      const file = job === running ? join(again.runDir(job.job_id), 'attempts', '1', 'stdout.log') : join(again.runDir(job.job_id), 'engine', 'live.stdout');
      t.same(told, (await readFile(file, 'utf8')).split('\n').slice(0, -1), 'every output line told once');
    }
  });
}
