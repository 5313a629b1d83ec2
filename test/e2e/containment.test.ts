import { jobProcesses } from '../helpers/job-processes.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../daemon/base/clock.js';
import { engineCgroups, probeCgroups } from '../../daemon/process/cgroup.js';
import { CgroupContainment } from '../../daemon/process/cgroup-containment.js';
import { readStat } from '../../daemon/process/proc.js';
import { FIXTURES, TestDaemon, alive, waitForFile, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';

const probe = await probeCgroups();
const skip = probe.usable ? false : `cgroup v2 is not writable here, so engines cannot get cgroups of their own (${probe.problem})`;
const cgroupRoot = probe.usable ? probe.dir : '';
const engines = {
  codex: { command: [join(FIXTURES, 'fake-codex.mjs')] },
  gemini: { command: [join(FIXTURES, 'fake-gemini.mjs')] },
  iflow: { command: ['/nonexistent/iflow'] },
};

/** The engine cgroups of a job that exist now. */
const cgroupsOf = (jobId: string): string[] => engineCgroups(cgroupRoot).flatMap((c) => (c.jobId === jobId ? [c.path] : []));

/** The pids the fake engine wrote for a job: the engine, its child, and the hidden tool (`hang_hidden`, `ok_hidden`). */
async function pidsOf(daemon: TestDaemon, jobId: string): Promise<{ engine: number; child: number; hidden: number }> {
  return { hidden: await daemon.enginePid(jobId, 'hidden-pid'), engine: await daemon.enginePid(jobId), child: await daemon.enginePid(jobId, 'child-pid') };
}

/** Checks that nothing leads from the engine to the tool but its cgroup: not its group, session, parent or job mark. */
async function checkHidden(t: Test, pids: { engine: number; hidden: number }): Promise<void> {
  const stat = readStat(pids.hidden);
  t.ok(stat !== null && stat.ppid !== pids.engine && stat.pgid !== pids.engine, 'the tool left the engine: another parent, another group');
  // It cleared its environment; the test runner's coverage hooks add their own variables back, never the mark.
  const environ = (await readFile(`/proc/${pids.hidden}/environ`, 'utf8')).split('\0');
  t.notOk(environ.some((e) => e.startsWith('SKILLD_JOB_ID=')), 'and no job mark in its environment');
}

t.test('daemon/status reports the containment in use', async (t) => {
  const auto = await TestDaemon.start({ config: { engines } });
  t.teardown(() => auto.cleanup());
  const expected = probe.usable ? { kind: 'cgroup', path: probe.dir } : { kind: 'process_group' };
  t.same((await (await auto.client()).request<{ containment: unknown }>('daemon/status')).containment, expected, 'auto: cgroups where they can be used');
  const groups = await TestDaemon.start({ config: { engines, process_containment: 'process_group' } });
  t.teardown(() => groups.cleanup());
  t.same((await (await groups.client()).request<{ containment: unknown }>('daemon/status')).containment, { kind: 'process_group' });
});

t.test('process_group containment without a sandbox: a tool that cleared its environment, left the session and lost its parent outlives a cancel (the documented limit)', async (t) => {
  const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300, engines, process_containment: 'process_group', sandbox: 'off' } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang_hidden' } });
  const pids = await pidsOf(daemon, created.job_id);
  t.teardown(async () => {
    if (alive(pids.hidden)) process.kill(pids.hidden, 'SIGKILL');
    await waitUntilGone(pids.hidden);
  });
  await checkHidden(t, pids);
  t.match(await client.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
  t.notOk(alive(pids.engine) || alive(pids.child), 'the engine and its child are gone');
  t.ok(alive(pids.hidden), 'the hidden tool is not: nothing led to it');
});

t.test('process_group containment in a sandbox: that tool ends with the cancel, since it cannot leave the sandbox', { skip: NO_SANDBOX }, async (t) => {
  const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300, engines, process_containment: 'process_group' } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang_hidden' } });
  const pids = await pidsOf(daemon, created.job_id);
  await checkHidden(t, pids);
  t.match(await client.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
  t.notOk(alive(pids.engine) || alive(pids.child) || alive(pids.hidden), 'the engine, its child and the hidden tool are gone');
  t.same(jobProcesses(created.job_id), [], 'nothing of the job is left');
});

t.test('cgroup containment', { skip }, async (t) => {
  const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300, engines, process_containment: 'cgroup' } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const create = (engine: string, scenario: string): Promise<JobView> => client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario } });

  t.test('a cancel leaves nothing of the engine, not even a tool that cleared its environment, left the session and lost its parent', async (t) => {
    const created = await create('codex', 'hang_hidden');
    const pids = await pidsOf(daemon, created.job_id);
    await checkHidden(t, pids);
    t.match(await readFile(`/proc/${pids.hidden}/cgroup`, 'utf8'), new RegExp(`^0::.*/skilld-${created.job_id}-\\d+$`, 'm'), 'the tool is in its engine cgroup');
    t.equal(cgroupsOf(created.job_id).length, 1, 'one cgroup for the one engine process');
    t.match(await client.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
    t.notOk(alive(pids.hidden), 'the hidden tool, which ignores SIGTERM, is gone when the cancel answers');
    t.notOk(alive(pids.engine) || alive(pids.child), 'so are the engine and its child');
    t.same(cgroupsOf(created.job_id), [], 'and the cgroup is removed');
  });

  t.test('a tool left by an engine that exits normally is gone once the job has succeeded', async (t) => {
    const created = await create('gemini', 'ok_hidden');
    const job = await waitForStatus(client, created.job_id);
    t.equal(job.status, 'succeeded');
    t.ok(Number(await readFile(join(daemon.runDir(created.job_id), 'workspace', '.fake-engine', 'hidden-pid'), 'utf8')) > 0, 'the engine left a tool');
    t.same(jobProcesses(created.job_id), [], 'the tool it left is gone');
    t.same(cgroupsOf(created.job_id), [], 'the cgroup is removed');
  });

  t.test('a tool started while the engine is being stopped is gone when the cancel answers', async (t) => {
    // A grace period no busy machine outlasts: the engine starts its tool at SIGTERM, before the kill.
    const polite = await TestDaemon.start({ config: { kill_grace_ms: 60_000, engines, process_containment: 'cgroup' } });
    t.teardown(() => polite.cleanup());
    const own = await polite.client();
    const created = await own.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'term_escape' } });
    await waitForFile(join(polite.runDir(created.job_id), 'workspace', '.fake-engine', 'child-pid'));
    t.match(await own.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
    t.ok(Number(await readFile(join(polite.runDir(created.job_id), 'workspace', '.fake-engine', 'orphan-pid'), 'utf8')) > 0, 'the engine started a tool as it was stopped');
    t.same(jobProcesses(created.job_id), [], 'the tool born during the stop is gone');
    t.same(cgroupsOf(created.job_id), []);
  });

  t.test('an engine that cannot be started fails with ENGINE_SPAWN_FAILED and leaves no cgroup', async (t) => {
    const job = await waitForStatus(client, (await create('iflow', 'ok')).job_id);
    t.same(job.error, { code: 'ENGINE_SPAWN_FAILED', message: 'cannot start /nonexistent/iflow: ENOENT' }, 'as if no shell were in between');
    t.same(cgroupsOf(job.job_id), []);
  });
});

t.test('cgroup containment: a restart after SIGKILL stops and removes the cgroups of its own jobs it cannot take up, and touches no other', { skip }, async (t) => {
  const config = { kill_grace_ms: 300, engines, process_containment: 'cgroup' };
  // Another daemon's engine, in a cgroup named like ours, for a job this daemon never had.
  const foreign = new CgroupContainment(cgroupRoot, systemClock, 300).hold({ argv: [process.execPath, '-e', "process.stdout.write('up'); setInterval(() => {}, 1000)"], cwd: '/', env: {}, mark: 'job-of-another-daemon' });
  const [file, ...args] = foreign.argv as [string, ...string[]];
  const stranger = spawn(file, args, { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  t.teardown(() => foreign.stop(stranger.pid as number));
  await once(stranger.stdout as NodeJS.ReadableStream, 'data');

  const daemon = await TestDaemon.start({ config });
  const client = await daemon.client();
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang_hidden' } });
  const pids = await pidsOf(daemon, created.job_id);
  await waitForStatus(client, created.job_id, ['running']);
  await daemon.kill();
  // A keeper gone without its engine's status: the engine cannot be taken up (docs/restarts.md).
  await daemon.killKeeper(created.job_id);
  t.ok(alive(pids.engine) && alive(pids.hidden), 'the engine and its hidden tool outlive the daemon and their keeper');

  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.cleanup());
  // A job under recovery is shown once it is settled, and what was left of it is stopped before.
  t.match(await (await again.client()).request('jobs/get', { job_id: created.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } });
  t.notOk(alive(pids.hidden) || alive(pids.engine) || alive(pids.child), 'nothing of the job is alive once its job is settled');
  t.same(cgroupsOf(created.job_id), [], 'its cgroup is removed');
  t.ok(again.logLines.some((line) => line.includes('stopped and removed a cgroup of the job left from before the restart') && line.includes(created.job_id)), 'the restart says so');
  t.ok(alive(stranger.pid as number), "the other daemon's engine still runs");
  t.equal(cgroupsOf('job-of-another-daemon').length, 1, 'in its cgroup');
});
