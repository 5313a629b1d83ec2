// One daemon per state folder (docs/restarts.md): a second daemon on a folder another one holds
// exits 75 before it binds its socket, naming the holder; the holder goes on untouched; the
// kernel lets the lock go when its holder dies, however it dies.
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RpcClient } from '../../rpc/client.js';
import { RELEASE_FILE, TestDaemon, alive, testPostgres, waitForStatus, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';
import { runSkillctl } from '../helpers/skillctl.js';

// The files store: its events.ndjson is read below, line by line, for a job settled twice.
const base = { store: 'files' as const, config: { engines_on_stop: 'keep' } };

/** A daemon (removed at the test's end) with one one-shot turn running, held until its release file. */
async function holding(t: Test): Promise<{ daemon: TestDaemon; client: RpcClient; job: JobView }> {
  const daemon = await TestDaemon.start(base);
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { release_file: RELEASE_FILE, emit: { greeting: 'once' } } });
  await waitForStatus(client, job.job_id, ['running']);
  return { daemon, client, job };
}

/** Releases the job's turn and waits for its `finished` event; its events as stored, one per line of its log (none merged). */
async function settle(daemon: TestDaemon, jobId: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const trail = await EventTrail.follow(daemon, jobId);
  await daemon.release(jobId);
  await trail.finished();
  // Live events are told before they are written; a replay is read from the file, once they are.
  await (await EventTrail.follow(daemon, jobId)).finished();
  const lines = (await readFile(join(daemon.runDir(jobId), 'events.ndjson'), 'utf8')).split('\n').filter((line) => line !== '');
  return lines.map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
}

const succeededOnce = (events: Array<{ type: string; data: Record<string, unknown> }>): { succeeded: number; finished: number } => ({
  succeeded: events.filter((e) => e.type === 'status_changed' && e.data['to'] === 'succeeded').length,
  finished: events.filter((e) => e.type === 'finished').length,
});

t.test('a second daemon on the same state folder exits 75 before binding its socket, naming the first; the first goes on and settles its job once', async (t) => {
  const { daemon, client, job } = await holding(t);
  const second = await TestDaemon.refused({ ...base, dir: daemon.dir, socket: join(daemon.dir, 'second.sock') });
  t.equal(second.ready, false, 'it never got ready');
  t.equal(second.code, 75, 'EX_TEMPFAIL');
  t.equal(second.stderr, `skilld: the state folder ${daemon.stateDir} is in use by another skilld (pid ${daemon.child.pid}, socket ${daemon.socket}); one daemon per state folder\n`);
  const logged = second.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.match(logged, [{ level: 50, code: 'STATE_DIR_LOCKED', state_dir: daemon.stateDir, holder: { pid: daemon.child.pid, socket: daemon.socket }, msg: 'the state folder is in use by another skilld' }], 'one error line, with its code: it did nothing before');
  t.equal(logged.length, 1);
  t.notOk(existsSync(second.socket), 'its socket was never bound');

  const fresh = await daemon.client();
  t.match(await fresh.request('daemon/ping'), { ok: true }, 'the first answers on its socket');
  t.match(await client.request('daemon/status'), { pid: daemon.child.pid, state_lock: { path: join(daemon.stateDir, 'skilld.lock'), held: true, reason: null } });
  const events = await settle(daemon, job.job_id);
  t.same(succeededOnce(events), { succeeded: 1, finished: 1 }, 'settled once: one succeeded, one finished');
  t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'once' } });
  t.equal(daemon.child.exitCode, null, 'the first is still running');
});

t.test('after the holder is SIGKILLed, a new daemon on the folder starts: the kernel let the lock go, and no engine kept it', async (t) => {
  const { daemon, job } = await holding(t);
  const enginePid = await daemon.enginePid(job.job_id);
  await daemon.kill();
  t.ok(alive(enginePid), 'the engine and its keeper outlive the daemon');

  const again = await TestDaemon.start({ ...base, dir: daemon.dir });
  t.teardown(() => again.stop());
  const client = await again.client();
  t.match(await client.request('daemon/status'), { pid: again.child.pid, state_lock: { held: true } });
  t.same(JSON.parse(await readFile(join(again.stateDir, 'skilld.lock'), 'utf8')), { pid: again.child.pid, socket: again.socket }, 'the lock file names the new holder');
  t.match(await client.request('jobs/get', { job_id: job.job_id }), { status: 'running' }, 'the turn was taken up');
  t.same(succeededOnce(await settle(again, job.job_id)), { succeeded: 1, finished: 1 });
});

t.test('a lock file that is a symbolic link is refused, never followed, before anything of the state folder is touched', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-lock-link-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const stateDir = join(dir, 'state');
  await mkdir(stateDir, { mode: 0o700 });
  const target = join(dir, 'elsewhere');
  await writeFile(target, 'kept as it is');
  await symlink(target, join(stateDir, 'skilld.lock'));

  const refused = await TestDaemon.refused({ ...base, dir });
  t.equal(refused.ready, false);
  t.equal(refused.code, 1);
  t.equal(refused.stderr, `skilld: cannot start: the state folder's lock file ${join(stateDir, 'skilld.lock')} is a symbolic link; it is never followed: remove it\n`);
  t.equal(await readFile(target, 'utf8'), 'kept as it is', 'the file it leads to is untouched');
  t.notOk(existsSync(join(stateDir, 'runs')), 'runs/ was not made');
  t.notOk(existsSync(refused.socket), 'no socket');
});

t.test('where flock cannot be called (koffi does not load), the daemon starts, warns, and says so in daemon/status', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-lock-none-'));
  // A platform without koffi's prebuilt library: importing it fails.
  const hooks = join(dir, 'no-koffi-hooks.mjs');
  await writeFile(hooks, "export async function resolve(specifier, context, next) { if (specifier === 'koffi') throw new Error('koffi is not built for this platform'); return next(specifier, context); }\n");
  const register = join(dir, 'no-koffi.mjs');
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const daemon = await TestDaemon.start({ ...base, dir, env: { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${pathToFileURL(register).href}` } });
  t.teardown(() => daemon.cleanup());
  const warning = JSON.parse(await daemon.logged((line) => line.includes('STATE_LOCK_UNAVAILABLE'))) as Record<string, unknown>;
  t.match(warning, { level: 40, code: 'STATE_LOCK_UNAVAILABLE', path: join(daemon.stateDir, 'skilld.lock'), problem: /^flock cannot be called here: koffi is not built for this platform/ });
  const status = await (await daemon.client()).request('daemon/status');
  t.match(status, { state_lock: { path: join(daemon.stateDir, 'skilld.lock'), held: false, reason: /^flock cannot be called here: koffi is not built/ } });
  const shown = await runSkillctl(['status', '--socket', daemon.socket], process.env);
  t.match(shown.stdout, /^state lock:\s+not held: flock cannot be called here: koffi is not built for this platform/m, 'skillctl status says so');
});

const postgres = await testPostgres();

t.test('with a PostgreSQL store too: a second daemon on the folder, under a host_id of its own, exits 75 before it joins', { skip: typeof postgres === 'string' ? postgres : false }, async (t) => {
  const daemon = await TestDaemon.start({ store: 'postgres', config: { host_id: 'host-a' } });
  t.teardown(() => daemon.cleanup());
  const second = await TestDaemon.refused({ store: 'postgres', dir: daemon.dir, socket: join(daemon.dir, 'second.sock'), config: { host_id: 'host-b' } });
  t.equal(second.ready, false);
  t.equal(second.code, 75);
  t.match(second.stderr, `is in use by another skilld (pid ${daemon.child.pid}, socket ${daemon.socket})`);
  const { hosts } = await (await daemon.client()).request<{ hosts: Array<{ host_id: string }> }>('daemon/hosts');
  t.same(hosts.map((h) => h.host_id), ['host-a'], 'the second never joined the store');
});
