// Owners and access (docs/access.md) with real users of the host: the daemon learns who connects
// from the kernel (SO_PEERCRED), and a job its caller may not see does not exist for that caller.
import t from 'tap';
import { chmod } from 'node:fs/promises';
import { cannotMakeUsers, makeUsers, requestAs, skillctlAs, type Answer } from '../helpers/as-user.js';
import { TestDaemon, waitForStatus } from '../helpers/daemon.js';

const skip = await cannotMakeUsers();

const resultOf = <T>(answer: Answer): T => {
  if ('error' in answer) throw new Error(`${answer.error.code}: ${answer.error.message}`);
  return answer.result as T;
};
const codeOf = (answer: Answer): string => ('error' in answer ? answer.error.code : 'ok');

t.test('alice, bob and carol (an admin by group) on one daemon', { skip: skip ?? false }, async (t) => {
  const { users, groups } = await makeUsers(['alice', 'bob', 'carol'], { ops: ['carol'] });
  const { alice, bob, carol } = users as Record<'alice' | 'bob' | 'carol', (typeof users)[string]>;
  const daemon = await TestDaemon.start({ config: { socket_mode: '0666', access: { admins: [`group:${groups['ops']}`] } } });
  t.teardown(() => daemon.cleanup());
  // The socket's folder is the test's own: others may pass through it to the socket.
  await chmod(daemon.dir, 0o711);
  const as = (user: typeof alice, method: string, params: unknown = {}) => requestAs(user, daemon.socket, method, params);

  const created = resultOf<{ job_id: string; owner: unknown }>(await as(alice, 'jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } }));
  t.same(created.owner, { uid: alice.uid, user: alice.name }, 'the job records who created it, as the kernel said');
  const root = await daemon.client();
  await waitForStatus(root, created.job_id, ['waiting_user']);

  const got = resultOf<{ owner: unknown; input: unknown; parameter: unknown; status: string }>(await as(alice, 'jobs/get', { job_id: created.job_id }));
  t.match(got, { owner: { user: alice.name }, input: { scenario: 'ask' }, parameter: {}, status: 'waiting_user' }, 'its owner sees it, with what it was asked');

  const listed = (user: typeof alice) => as(user, 'jobs/list').then((answer) => resultOf<{ jobs: Array<{ job_id: string }> }>(answer).jobs.map((job) => job.job_id));
  t.same(await listed(bob), [], 'bob does not see it in the list');
  for (const [method, params] of [['jobs/get', {}], ['jobs/pending', {}], ['jobs/reply', { interaction_id: 1, response: 'from bob' }], ['jobs/cancel', {}], ['jobs/result', {}], ['jobs/retry', {}]] as const) {
    t.equal(codeOf(await as(bob, method, { job_id: created.job_id, ...params })), 'JOB_NOT_FOUND', `bob: ${method} answers JOB_NOT_FOUND`);
  }
  t.equal(codeOf(await as(bob, 'jobs/subscribe', { job_id: created.job_id, after_seq: 0 })), 'JOB_NOT_FOUND', 'bob cannot follow its events');
  t.equal(codeOf(await as(bob, 'jobs/remove', { job_ids: [created.job_id], force: true })), 'JOB_NOT_FOUND', 'nor remove it, even with force');
  t.equal(codeOf(await as(bob, 'jobs/get', { job_id: 'job-0000000000-000000000' })), 'JOB_NOT_FOUND', 'answered as a job that does not exist');
  t.equal((await root.request<{ status: string }>('jobs/get', { job_id: created.job_id })).status, 'waiting_user', 'the job keeps waiting');

  t.equal(codeOf(await as(bob, 'jobs/list', { before: created.job_id })), 'JOB_NOT_FOUND', "a cursor naming alice's job is no job to bob");
  t.equal(codeOf(await as(bob, 'daemon/stop')), 'NOT_PERMITTED', 'bob may not stop the daemon');
  t.equal(codeOf(await as(bob, 'notify/log')), 'NOT_PERMITTED', "nor read every job's webhook deliveries");
  t.ok((await listed(carol)).includes(created.job_id), 'carol, in the admins group, sees it');
  t.match(resultOf(await as(carol, 'jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'from carol' })), { accepted: true });
  t.equal((await waitForStatus(root, created.job_id)).status, 'succeeded', "carol's reply finished it");

  const shared = resultOf<{ job_id: string; share_with: string[] }>(await as(alice, 'jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' }, share_with: [`user:${bob.name}`] }));
  t.same(shared.share_with, [`user:${bob.name}`]);
  t.same(await listed(bob), [shared.job_id], 'a job alice shares with bob is in his list, and only that one');
  t.match(resultOf(await as(bob, 'jobs/get', { job_id: shared.job_id })), { job_id: shared.job_id, owner: { user: alice.name } });

  const run = await skillctlAs(alice, ['run', 'echo-auto', '--engine', 'codex', '-i', 'scenario=ok', '--share', `group:${groups['ops']}`, '--socket', daemon.socket]);
  t.equal(run.code, 0, run.stderr);
  const byRun = run.stdout.trim();
  const shown = await skillctlAs(alice, ['show', byRun, '--socket', daemon.socket]);
  t.match(shown.stdout, new RegExp(`^owner: +${alice.name}$`, 'm'), 'skillctl show names the owner');
  t.match(shown.stdout, new RegExp(`^share_with: +group:${groups['ops']}$`, 'm'));
  t.match(shown.stdout, /^input: +\{"scenario":"ok"\}$/m, 'and what it was asked');
  const table = await skillctlAs(carol, ['jobs', '--socket', daemon.socket]);
  t.match(table.stdout, new RegExp(`^${byRun}\\s+${alice.name}\\s+echo-auto`, 'm'), 'skillctl jobs: its USER');

  const refused = await as(alice, 'jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' }, share_with: ['user:nosuchuser-x', `user:${bob.name}`] });
  t.match(refused, { error: { code: 'INVALID_PARAMS', message: /share_with entry "user:nosuchuser-x" names no user on this host/ } }, 'an entry naming nobody is refused, named');

  await waitForStatus(root, shared.job_id);
  const pruned = resultOf<{ job_ids: string[] }>(await as(bob, 'jobs/prune', { older_than_sec: 0 }));
  t.same(pruned.job_ids, [shared.job_id], 'bob prunes only what he may act on');
  t.ok((await listed(carol)).includes(created.job_id), "alice's other job is still there");
});
