// Acknowledged means it will happen (docs/restarts.md): a `jobs/create` or `jobs/reply` the daemon
// answered is never lost to a SIGKILL a few milliseconds later. Whatever step the daemon was at
// (the job queued, stored as running with its engine not started yet, the engine started), the
// next daemon runs that turn exactly once, and the job succeeds.
import t, { type Test } from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RpcClient } from '../../rpc/client.js';
import { FIXTURES, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';

const config = { max_concurrent: 8, kill_grace_ms: 300, engines_on_stop: 'keep' };
/** When the daemon is killed after the answers: at once, and within the first 50 ms of the work they started. */
const KILL_AFTER_MS = [0, 5, 20, 50];

/** Each job's engine invocations: the fake engine notes every one in its workspace. */
async function calls(daemon: TestDaemon, jobId: string): Promise<number> {
  return (await daemon.engineCalls(jobId)).length;
}

/** Starts the daemon again on the folder of `before`, and waits until every job in `jobIds` is finished. */
async function again(t: Test, before: TestDaemon, jobIds: readonly string[]): Promise<{ daemon: TestDaemon; client: RpcClient; statuses: string[] }> {
  const daemon = await TestDaemon.start({ dir: before.dir, config });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const statuses: string[] = [];
  for (const id of jobIds) statuses.push((await waitForStatus(client, id)).status);
  return { daemon, client, statuses };
}

t.test('jobs created and acknowledged, then a SIGKILL 0–50 ms later: each runs once and succeeds', async (t) => {
  for (const delay of KILL_AFTER_MS) {
    await t.test(`killed ${delay} ms after the answers`, async (t) => {
      const daemon = await TestDaemon.start({ config });
      const client = await daemon.client();
      const created = await Promise.all(
        Array.from({ length: 4 }, (_, i) => client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: `n${i}` } } })),
      );
      if (delay > 0) await sleep(delay);
      await daemon.kill();
      const ids = created.map((job) => job.job_id);
      if (process.env['DEBUG_LOGS']) console.error(daemon.logLines.filter((l) => ids.some((id) => l.includes(id))).join('\n'));
      const { daemon: next } = await again(t, daemon, ids);
      for (const [i, id] of ids.entries()) {
        const job = await (await next.client()).request<JobView & { error: unknown }>('jobs/get', { job_id: id });
        t.equal(job.status, 'succeeded', `job ${i} succeeded`, { error: job.error });
        t.equal(await calls(next, id), 1, `job ${i}'s engine ran once`, { log: next.logLines.filter((l) => l.includes(id)) });
      }
    });
  }
});

// Resumable replies only: a live session's reply has a window of its own (docs/restarts.md, "Live
// sessions"), which this test would hit now and then.
for (const profile of ['resumable'] as Array<'resumable' | 'sticky_process'>) {
t.test(`replies acknowledged (${profile}), then a SIGKILL 0–50 ms later: each job's next turn runs once and it succeeds`, async (t) => {
  // The fakes fail the resume probe with FAKE_ENGINE_NO_RESUME: interactive jobs are then sticky.
  const engines = profile === 'sticky_process' ? { engines: { codex: { command: [join(FIXTURES, 'fake-codex.mjs')], env: { FAKE_ENGINE_NO_RESUME: '1' } } } } : {};
  const replyConfig = { ...config, max_concurrent: 20, ...engines };
  const daemon = await TestDaemon.start({ config: replyConfig });
  const client = await daemon.client();
  const jobs = await Promise.all(
    Array.from({ length: 20 }, () => client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } })),
  );
  for (const job of jobs) t.match(await waitForStatus(client, job.job_id, ['waiting_user']), { status: 'waiting_user', interactive_profile: { kind: profile } });
  // The replies all at once, the daemon killed 20 ms after the first answer: the jobs answered
  // by then are at every step of their next turn's start. Those answered must run.
  const answered: string[] = [];
  let killing: Promise<void> | null = null;
  await Promise.all(
    jobs.map(async (job) => {
      const answer = await client.request<{ accepted: boolean }>('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'Rome' }).catch(() => null);
      if (answer?.accepted !== true || daemon.child.exitCode !== null || daemon.child.signalCode !== null) return;
      answered.push(job.job_id);
      killing ??= sleep(20).then(() => daemon.kill());
    }),
  );
  await (killing ?? daemon.kill());
  // Whatever was not answered yet is answered by the next daemon.
  const next = await TestDaemon.start({ dir: daemon.dir, config: replyConfig });
  t.teardown(() => next.cleanup());
  const c = await next.client();
  for (const job of jobs) {
    if (answered.includes(job.job_id)) continue;
    const now = await waitForStatus(c, job.job_id, ['waiting_user']);
    if (now.status === 'waiting_user') await c.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'Rome' });
  }
  t.ok(answered.length > 0, `${answered.length} replies were answered before the kill`);
  for (const job of jobs) {
    const done = await waitForStatus(c, job.job_id);
    t.equal(done.status, 'succeeded', `${job.job_id} succeeded`, { error: (done as JobView & { error?: unknown }).error, log: next.logLines.filter((l) => l.includes(job.job_id) && !l.includes('"output"')).map((l) => l.slice(0, 300)) });
    t.equal(await calls(next, job.job_id), 2, 'its engine ran twice: the question, then the one turn after the reply');
    const trail = await EventTrail.follow(next, job.job_id);
    await trail.finished();
    t.notOk(trail.statuses.includes('failed'), 'it never failed on the way');
  }
});
}
