// Retention through the real daemon (docs/retention.md): `jobs prune` by age and status, its dry
// run and its confirmation; a removed job answers JOB_NOT_FOUND everywhere and its run folder is
// gone; waiting and running jobs are never removed; the background policy keeps the newest jobs;
// a restart keeps what was removed removed.
import t from 'tap';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RpcClient } from '../../rpc/client.js';
import { rpcError, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl, type Outcome } from '../helpers/skillctl.js';
import { noTerminal, onTerminal } from '../helpers/terminal.js';

async function finishedJob(client: RpcClient, scenario = 'ok'): Promise<JobView> {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario } });
  return waitForStatus(client, job.job_id);
}

async function waitingJob(client: RpcClient): Promise<JobView> {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  return waitForStatus(client, job.job_id, ['waiting_user']);
}

const ids = (jobs: readonly JobView[]): string[] => jobs.map((job) => job.job_id);

t.test('jobs prune: a dry run, then by status and by age; removed jobs are gone for every method, waiting ones stay and go on', async (t) => {
  const daemon = await TestDaemon.start({ config: { max_concurrent: 4, retention: { max_age: null } } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const ctl = (args: string[]): Promise<Outcome> => runSkillctl(args, { ...process.env, SKILLD_SOCKET: daemon.socket });
  const done = [await finishedJob(client), await finishedJob(client, 'exit1'), await finishedJob(client)];
  const waiting = await waitingJob(client);
  const [first, failed, last] = done as [JobView, JobView, JobView];
  t.equal(failed.status, 'failed');

  const refused = await ctl(['jobs', 'prune', '--older-than', '0s']);
  t.equal(refused.code, 2, 'no --force and no terminal: a usage error');
  t.match(refused.stderr, /add --force/);
  t.equal((await ctl(['jobs', 'prune', '--older-than', 'soon', '-f'])).code, 2, 'a duration without a unit');
  t.match((await ctl(['jobs', 'prune', '--status', 'running', '-f'])).stderr, /finished jobs only/);
  t.match((await ctl(['jobs', '--dry-run'])).stderr, /--dry-run goes with jobs prune/);

  t.match((await ctl(['status'])).stdout, /^retention: +every finished job kept; no round yet$/m);
  const policy = JSON.parse((await ctl(['jobs', 'prune', '--dry-run', '--json'])).stdout) as { count: number; selection: unknown };
  t.same(policy, { dry_run: true, count: 0, job_ids: [], truncated: false, selection: { finished_before: null, keep_newest: null, statuses: null } }, 'this policy keeps every job');
  const dry = await ctl(['jobs', 'prune', '--older-than', '0s', '--dry-run']);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, /^would remove 3 finished job\(s\) \(finished before /);
  for (const job of done) t.match(dry.stdout, job.job_id);
  t.notMatch(dry.stdout, waiting.job_id, 'a waiting job is never selected');
  t.equal((await client.request<{ jobs: JobView[] }>('jobs/list', {})).jobs.length, 4, 'a dry run removes nothing');

  const byStatus = JSON.parse((await ctl(['jobs', 'prune', '--status', 'failed', '-f', '--json'])).stdout) as { count: number; job_ids: string[] };
  t.same([byStatus.count, byStatus.job_ids], [1, [failed.job_id]], '--status alone: every finished job of that status');
  const byAge = await ctl(['jobs', 'prune', '--older-than', '0s', '--force', '-q']);
  t.equal(byAge.code, 0, byAge.stderr);
  t.same(byAge.stdout.trim().split('\n'), [first.job_id, last.job_id], 'the earliest finished first');

  for (const job of done) {
    for (const method of ['jobs/get', 'jobs/result', 'jobs/history', 'jobs/pending', 'jobs/logs', 'jobs/retry', 'jobs/cancel', 'jobs/subscribe']) {
      t.equal((await rpcError(client.request(method, { job_id: job.job_id }))).dataCode, 'JOB_NOT_FOUND', `${method} of a removed job`);
    }
    t.equal((await rpcError(client.request('jobs/reply', { job_id: job.job_id, interaction_id: 1, response: 'x' }))).dataCode, 'JOB_NOT_FOUND', 'jobs/reply of a removed job');
    t.notOk(existsSync(daemon.runDir(job.job_id)), 'its run folder is gone');
  }
  t.same((await readdir(join(daemon.stateDir, 'runs'))).filter((name) => name.startsWith('.')), [], 'nothing left aside');
  t.same(ids((await client.request<{ jobs: JobView[] }>('jobs/list', {})).jobs), [waiting.job_id]);
  t.match(await client.request('daemon/status', {}), { jobs: { succeeded: 0, failed: 0, waiting_user: 1 } });

  await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: 'Lisbon' });
  t.equal((await waitForStatus(client, waiting.job_id)).status, 'succeeded', 'the waiting job went on');

  await daemon.stop();
  const again = await TestDaemon.start({ dir: daemon.dir, config: { retention: { max_age: null } } });
  t.teardown(() => again.cleanup());
  const after = await again.client();
  t.same(ids((await after.request<{ jobs: JobView[] }>('jobs/list', {})).jobs), [waiting.job_id], 'removed jobs stay removed after a restart');
  t.match(await after.request('daemon/status', {}), { notices: [] });
});

t.test('the background policy: only the newest max_jobs finished jobs are kept', async (t) => {
  const daemon = await TestDaemon.start({ config: { retention: { max_age: null, max_jobs: 1, interval: '1s' } } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const done = [await finishedJob(client), await finishedJob(client), await finishedJob(client)];
  const newest = done[2] as JobView;
  // A round comes every second: wait for the daemon to say it removed the others.
  await daemon.logged((line) => line.includes('retention removed finished jobs'));
  for (let i = 0; i < 100 && (await client.request<{ jobs: JobView[] }>('jobs/list', {})).jobs.length > 1; i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(ids((await client.request<{ jobs: JobView[] }>('jobs/list', {})).jobs), [newest.job_id]);
  for (const job of done.slice(0, 2)) t.notOk(existsSync(daemon.runDir(job.job_id)), 'its run folder went with it');
  const { retention } = await client.request<{ retention: { last_round: { removed: number; error: string | null } | null } }>('daemon/status');
  t.match(retention, { max_age_sec: null, max_jobs: 1, interval_sec: 1, last_round: { at: String, error: null } }, 'daemon/status shows the policy and the last round');
  const status = await runSkillctl(['status'], { ...process.env, SKILLD_SOCKET: daemon.socket });
  t.match(status.stdout, /^retention: +finished jobs kept the newest 1, looked at every 1s; last round \S+ ago: \d+ removed$/m, 'and skillctl status says it in a line');
});

t.test('jobs prune on a terminal asks first: no keeps the jobs, yes removes them', { skip: noTerminal }, async (t) => {
  const daemon = await TestDaemon.start({ config: { retention: { max_age: null } } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const job = await finishedJob(client);
  const env = { ...process.env, SKILLD_SOCKET: daemon.socket };
  const no = onTerminal(['jobs', 'prune', '--older-than', '0s'], env);
  await no.until('Remove them? [y/N]');
  t.match(no.output, /1 finished job\(s\) would be removed/);
  no.type('n\n');
  t.equal((await no.done).code, 0);
  t.ok(await client.request('jobs/get', { job_id: job.job_id }), 'kept');
  const yes = onTerminal(['jobs', 'prune', '--older-than', '0s'], env);
  await yes.until('Remove them? [y/N]');
  yes.type('y\n');
  const outcome = await yes.done;
  t.equal(outcome.code, 0);
  t.match(outcome.output, /removed 1 finished job\(s\)/);
  t.equal((await rpcError(client.request('jobs/get', { job_id: job.job_id }))).dataCode, 'JOB_NOT_FOUND');
});
