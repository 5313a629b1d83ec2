// skillctl rm / jobs/remove (docs/protocol.md): finished jobs go for good, with their run folders;
// an active one is refused, and nothing named with it is removed, unless --force cancels it first.
import t from 'tap';
import { existsSync } from 'node:fs';
import { RpcCallError } from '../../rpc/client.js';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { jobProcesses } from '../helpers/job-processes.js';
import { runSkillctl } from '../helpers/skillctl.js';

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 200 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();
const env = { ...process.env, SKILLD_SOCKET: daemon.socket, NO_COLOR: '1' };

async function finished(): Promise<string> {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', input: { emit: { greeting: 'x' } } });
  await waitForStatus(client, job.job_id);
  return job.job_id;
}

async function code(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof RpcCallError) return error.dataCode;
    throw error;
  }
  return 'no error';
}

t.test('finished jobs are removed with their run folders; short ids are resolved', async (t) => {
  const [a, b] = [await finished(), await finished()];
  t.ok(existsSync(daemon.runDir(a)));
  const out = await runSkillctl(['rm', a, b.slice('job-'.length, 'job-'.length + 16)], env);
  t.equal(out.code, 0, out.stderr);
  t.equal(out.stdout, `${a} removed\n${b} removed\n`);
  t.equal(await code(client.request('jobs/get', { job_id: a })), 'JOB_NOT_FOUND');
  t.equal(await code(client.request('jobs/get', { job_id: b })), 'JOB_NOT_FOUND');
  t.notOk(existsSync(daemon.runDir(a)), 'its run folder is gone');
});

t.test('an active job is refused, and a finished one named with it stays; --force cancels, then removes', async (t) => {
  const done = await finished();
  const running = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', input: { scenario: 'hang' } });
  await waitForStatus(client, running.job_id, ['running']);

  const refused = await runSkillctl(['rm', done, running.job_id], env);
  t.equal(refused.code, 1, 'the daemon refused it');
  t.match(refused.stderr, /JOB_NOT_FINISHED: job "job-[^"]+" is running; cancel it first, or remove it with force/);
  t.equal((await client.request<JobView>('jobs/get', { job_id: running.job_id })).status, 'running', 'the active job goes on');
  t.equal((await client.request<JobView>('jobs/get', { job_id: done })).status, 'succeeded', 'nothing named was removed');

  const forced = await runSkillctl(['rm', '--force', '--json', done, running.job_id], env);
  t.equal(forced.code, 0, forced.stderr);
  t.same(JSON.parse(forced.stdout), { removed: [done, running.job_id], canceled: [running.job_id] });
  t.equal(await code(client.request('jobs/get', { job_id: running.job_id })), 'JOB_NOT_FOUND');
  t.same(jobProcesses(running.job_id), [], 'no engine process of it is left');
});

t.test('bad requests: an unknown job, nothing named', async (t) => {
  t.equal(await code(client.request('jobs/remove', { job_ids: ['job-0000000000-000000000'] })), 'JOB_NOT_FOUND');
  t.equal(await code(client.request('jobs/remove', { job_ids: [] })), 'INVALID_PARAMS');
  const usage = await runSkillctl(['rm'], env);
  t.equal(usage.code, 2);
});
