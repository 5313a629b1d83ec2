// Restarts interrupt nothing (docs/restarts.md): engine processes outlive the daemon, and the next
// daemon takes them up where they are.
import t, { type Test } from 'tap';
import { readdirSync, type Dirent } from 'node:fs';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcClient } from '../../rpc/client.js';
import { FILES_ONLY, RELEASE_FILE, ROOT, TestDaemon, alive, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';
import { runSkillctl } from '../helpers/skillctl.js';

const config = { max_concurrent: 3, kill_grace_ms: 300, engines_on_stop: 'keep' };

/** A one-shot job whose engine prints its first lines, then waits for its release file. */
const held = (client: RpcClient, extra: Record<string, unknown> = {}): Promise<JobView> =>
  client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { release_file: RELEASE_FILE, emit: { greeting: 'kept' } }, ...extra });

/** A daemon (stopped and removed at the test's end) with one turn of `held` running, its engine started. */
async function holding(t: Test, extra: Record<string, unknown> = {}, options: { bin?: string } = {}): Promise<{ daemon: TestDaemon; client: RpcClient; job: JobView; pid: number }> {
  const daemon = await TestDaemon.start({ config, ...options });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const job = await held(client, extra);
  await waitForStatus(client, job.job_id, ['running']);
  return { daemon, client, job, pid: await daemon.enginePid(job.job_id) };
}

/** A finished job's stdout lines as its `output` events told them, and as its engine printed them. */
async function outputOf(daemon: TestDaemon, jobId: string): Promise<{ told: string[]; printed: string[] }> {
  const trail = await EventTrail.follow(daemon, jobId);
  await trail.finished();
  const told = trail.of('output').flatMap((e) => (e.data['stream'] === 'stdout' ? [String(e.data['text'])] : []));
  const printed = (await readFile(join(daemon.runDir(jobId), 'attempts', '1', 'stdout.log'), 'utf8')).split('\n').slice(0, -1);
  return { told, printed };
}

for (const how of ['SIGKILL', 'SIGTERM'] as const) {
  t.test(`a running one-shot turn outlives the daemon (${how}): it goes on, with every output line told once`, async (t) => {
    const { daemon, job, pid } = await holding(t);
    // The engine printed before the restart.
    await (await EventTrail.follow(daemon, job.job_id)).until((e) => e.type === 'output');

    if (how === 'SIGKILL') await daemon.kill();
    else t.equal(await daemon.stop(), 0, 'the daemon exits 0');
    t.ok(alive(pid), 'the engine process goes on without a daemon');
    // Output printed while no daemon is there is read by the next one.
    await daemon.release(job.job_id);

    const again = await TestDaemon.start({ dir: daemon.dir, config });
    t.teardown(() => again.stop());
    const c = await again.client();
    const done = await waitForStatus(c, job.job_id);
    t.equal(done.status, 'succeeded', 'the turn ends as it would have');
    t.match(await c.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'kept' } });
    const { told, printed } = await outputOf(again, job.job_id);
    t.same(told, printed, 'each line the engine printed is one output event, none lost, none doubled');
    const trail = await EventTrail.follow(again, job.job_id);
    await trail.finished();
    if (process.env['DEBUG_EVENTS']) console.error(await readFile(join(again.runDir(job.job_id), 'events.ndjson'), 'utf8'));
    t.same(trail.statuses, ['queued', 'running', 'succeeded'], 'the job never left running for the restart');
    t.match(await c.request('daemon/status'), { slots: { used: 0 } }, 'its slot is given back');
  });
}

/** The cgroups named after a job, in every hierarchy of the host (its engine's, its limits'). */
function cgroupsOf(jobId: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (entry.name.includes(jobId)) found.push(join(dir, entry.name));
      else if (depth > 0) walk(join(dir, entry.name), depth - 1);
    }
  };
  walk('/sys/fs/cgroup', 3);
  return found;
}

t.test('the cgroups an earlier daemon made for an engine taken up are removed once it ends', async (t) => {
  const { daemon, job } = await holding(t);
  const made = cgroupsOf(job.job_id);
  if (made.length === 0) return t.comment('skipped: this host gives engines no cgroup of their own');
  await daemon.kill();
  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  await waitForStatus(c, job.job_id, ['running']);
  await again.release(job.job_id);
  t.equal((await waitForStatus(c, job.job_id)).status, 'succeeded');
  await again.logged((line) => line.includes('"turn finished"') && line.includes(job.job_id));
  // The release runs as the engine's hold lets it go, right after the turn is heard to end.
  for (let i = 0; i < 100 && cgroupsOf(job.job_id).length > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(cgroupsOf(job.job_id), [], `none of ${made.join(', ')} is left`);
});

t.test('an engine that ended while the daemon was away ends its turn as it ended', async (t) => {
  const { daemon, job, pid } = await holding(t);
  await daemon.kill();
  await daemon.release(job.job_id);
  await waitUntilGone(pid);

  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  t.equal((await waitForStatus(c, job.job_id)).status, 'succeeded');
  const { told, printed } = await outputOf(again, job.job_id);
  t.same(told, printed, 'what it printed meanwhile is told once');
});

t.test('a hard timeout that passed while the daemon was away stops the turn at the start, as TIMEOUT', async (t) => {
  // Long enough for the engine to start and be seen on a busy machine, before the daemon goes.
  const { daemon, job, pid } = await holding(t, { hard_timeout_sec: 5 });
  const { started_at } = JSON.parse(await readFile(join(daemon.runDir(job.job_id), 'engine', 'keeper.json'), 'utf8')) as { started_at: string };
  await daemon.kill();
  // The deadline passes while no daemon is there; the engine would wait forever.
  while (Date.now() <= Date.parse(started_at) + 5000) await new Promise((resolve) => setTimeout(resolve, 50));

  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  t.match(await waitForStatus(c, job.job_id), { status: 'failed', error: { code: 'TIMEOUT' } });
  t.notOk(alive(pid), 'its engine is stopped');
});

t.test('a keeper that is gone without its engine\'s status: the engine is stopped, the job fails as interrupted', async (t) => {
  const { daemon, job, pid } = await holding(t);
  const record = JSON.parse(await readFile(join(daemon.runDir(job.job_id), 'engine', 'keeper.json'), 'utf8')) as { pid: number };
  await daemon.kill();
  process.kill(record.pid, 'SIGKILL');
  await waitUntilGone(record.pid);
  t.ok(alive(pid), 'its engine outlived its keeper');

  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  t.match(await c.request('jobs/get', { job_id: job.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED', message: /keeper ended without the exit status/ } });
  t.notOk(alive(pid), 'the engine is stopped before its job is shown settled');
});

t.test('`skillctl daemon stop --jobs` (daemon/stop with engines "stop") ends every engine with the daemon, as a maintenance stop', async (t) => {
  const { daemon, job, pid } = await holding(t);
  const exited = new Promise((resolve) => daemon.child.once('exit', resolve));
  const stopped = await runSkillctl(['--socket', daemon.socket, 'daemon', 'stop', '--jobs'], { PATH: process.env['PATH'] ?? '' });
  t.match(stopped, { code: 0, stdout: 'stopping the daemon and every engine process\n' });
  await exited;
  t.equal(daemon.child.exitCode, 0);
  t.notOk(alive(pid), 'the engine stopped with the daemon');

  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  t.match(await c.request('jobs/get', { job_id: job.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } });
});

/** A build of this daemon as another version would be: its own folder, its own package version. */
async function otherBuild(version: string): Promise<{ bin: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-build-'));
  await cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  await cp(join(ROOT, 'skills'), join(dir, 'skills'), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
  return { bin: join(dir, 'dist', 'daemon', 'bin.js'), remove: () => rm(dir, { recursive: true, force: true }) };
}

t.test('an upgrade: a turn started by one build is taken up by another, which speaks its keeper protocol', async (t) => {
  const old = await otherBuild('0.0.1-old');
  t.teardown(() => old.remove());
  const { daemon, client, job, pid } = await holding(t, {}, { bin: old.bin });
  t.match(await client.request('daemon/ping'), { version: '0.0.1-old' });
  t.equal(await daemon.stop(), 0);

  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  t.notMatch(await c.request('daemon/ping'), { version: '0.0.1-old' }, 'another build');
  t.match(await c.request('jobs/get', { job_id: job.job_id }), { status: 'running' });
  t.ok(alive(pid), 'the same engine process');
  await again.release(job.job_id);
  t.equal((await waitForStatus(c, job.job_id)).status, 'succeeded');
});

t.test('`daemon/stop` keeps the engines by default; a bad `engines` is refused and stops nothing', async (t) => {
  const daemon = await TestDaemon.start({ config });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  await t.rejects(client.request('daemon/stop', { engines: 'all' }), { message: /engines/ });
  t.match(await client.request('daemon/ping'), { ok: true }, 'still there');
  const job = await held(client);
  await waitForStatus(client, job.job_id, ['running']);
  const pid = await daemon.enginePid(job.job_id);
  const exited = new Promise((resolve) => daemon.child.once('exit', resolve));
  t.same(await client.request('daemon/stop'), { stopping: true, engines: 'keep' });
  await exited;
  t.ok(alive(pid), 'the engine goes on');
  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const c = await again.client();
  await again.release(job.job_id);
  t.equal((await waitForStatus(c, job.job_id)).status, 'succeeded');
});

// A record the daemon cannot use: its engine is not taken up, what is left of the job is stopped,
// and the job says why.
for (const [what, change, problem] of [
  ['never by pid alone: the pid now names another process', { start_time: '1' }, /keeper ended without the exit status/],
  ['never by pid alone: a machine that rebooted', { boot_id: '00000000-0000-0000-0000-000000000000' }, /the machine restarted since it started/],
  ['a keeper protocol this daemon does not know (a downgrade)', { keeper: 99 }, /protocol version 99/],
] as const) {
  t.test(`a record it cannot take up (${what}): the engine is stopped, and the job says why`, async (t) => {
    const { daemon, job, pid } = await holding(t);
    await daemon.kill();
    const path = join(daemon.runDir(job.job_id), 'engine', 'keeper.json');
    const record = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    // The recorded pid is alive (the keeper), but the record says another process, another boot, another protocol.
    await writeFile(path, JSON.stringify({ ...record, ...change }));

    const again = await TestDaemon.start({ dir: daemon.dir, config });
    t.teardown(() => again.stop());
    const c = await again.client();
    t.match(await c.request('jobs/get', { job_id: job.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED', message: problem } });
    t.notOk(alive(pid), 'what is left of the job is stopped before its job is shown settled');
  });
}

t.test('a status stored just before a crash, its event not yet written, is told at the next start', { skip: FILES_ONLY }, async (t) => {
  const daemon = await TestDaemon.start({ config });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  await daemon.stop();
  // The crash's window: the status is stored, its event and what followed it are not.
  const file = join(daemon.runDir(job.job_id), 'events.ndjson');
  const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
  const at = lines.findIndex((line) => line.includes('"to":"waiting_user"'));
  t.ok(at > 0, 'the event was written');
  await writeFile(file, `${lines.slice(0, at).join('\n')}\n`);
  const again = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => again.stop());
  const trail = await EventTrail.follow(again, job.job_id);
  await trail.until((event) => event.type === 'status_changed' && (event.data as { to?: string }).to === 'waiting_user');
  t.same(trail.statuses, ['queued', 'running', 'waiting_user'], 'the trail is whole again');
  await (await again.client()).request('jobs/cancel', { job_id: job.job_id });
});
