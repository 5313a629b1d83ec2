// Several daemons on one PostgreSQL (docs/cluster.md): each has its own socket, folders and fake
// engines; jobs go to whichever host has a free slot, never to two; a host that stops renewing its
// lease has its jobs settled by another, as its own restart would; a host taken for gone that
// comes back stops itself.
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import type { RpcClient } from '../../rpc/client.js';
import { ENGINE_NAMES, FIXTURES, processOf, rpcError, TestDaemon, testPostgres, waitForFile, waitForStatus, waitUntilGone, waitUntilRemoved, type JobView } from '../helpers/daemon.js';
import { replayOf } from '../helpers/job-events.js';
import { runSkillctl } from '../helpers/skillctl.js';

// Three daemons and a PostgreSQL at a time, about a hundred jobs: on two busy cores (the suite runs
// two files at once) this file took 300 s, the suite's limit per file. It gets a limit of its own.
t.setTimeout(900_000);

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;

/** Sticky jobs on the fakes: they fail the resume probe with FAKE_ENGINE_NO_RESUME. */
const STICKY_ENGINES = Object.fromEntries(ENGINE_NAMES.map((n) => [n, { command: [join(FIXTURES, `fake-${n}.mjs`)], env: { FAKE_ENGINE_NO_RESUME: '1' } }]));

interface Host {
  daemon: TestDaemon;
  client: RpcClient;
  id: string;
}

/** One database shared by the hosts of a test. */
async function sharedStore(): Promise<string> {
  if (typeof started === 'string') throw new Error(started);
  return started.createDatabase('cluster');
}

/** A daemon of the cluster, in a folder of its own (or `dir`, to start it again); stopped at the end of the test. */
async function host(t: Test, url: string, id: string, config: Record<string, unknown> = {}, dir?: string): Promise<Host> {
  const folder = dir ?? (await mkdtemp(join(tmpdir(), `skilld-${id}-`)));
  const daemon = await TestDaemon.start({ dir: folder, store: 'files', config: { store: url, host_id: id, ...config } });
  if (dir === undefined) t.teardown(() => rm(folder, { recursive: true, force: true }));
  t.teardown(() => daemon.stop());
  return { daemon, client: await daemon.client(), id };
}

function create(h: Host, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<JobView> {
  return h.client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', input, ...extra });
}

/** The hosts whose run folder has the job's workspace: where it ran. */
function ranOn(hosts: Host[], jobId: string): string[] {
  return hosts.filter((h) => existsSync(join(h.daemon.runDir(jobId), 'workspace'))).map((h) => h.id);
}

t.test('a job created on A is run by B when A\'s slots are full; any host answers for it and streams its events', { skip }, async (t) => {
  const url = await sharedStore();
  const a = await host(t, url, 'host-a', { max_concurrent: 1 });
  const hang = await create(a, { scenario: 'hang' });
  await waitForStatus(a.client, hang.job_id, ['running']);
  const b = await host(t, url, 'host-b', { max_concurrent: 1 });
  // Followed on A, where it was created, while B runs it; it leaves artifacts in B's run folder.
  const job = await create(a, { scenario: 'links', emit: { greeting: 'from b' } });
  const done = await waitForStatus(a.client, job.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  t.same(ranOn([a, b], job.job_id), ['host-b'], 'run on B only');
  t.same(ranOn([a, b], hang.job_id), ['host-a']);
  t.match(await b.client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'from b' } });
  t.match(await a.client.request('jobs/result', { job_id: job.job_id }), { output: { greeting: 'from b' } }, 'A answers for a job B ran');
  const replay = await replayOf(a.client, job.job_id);
  t.same(replay.map((e) => e.seq), replay.map((_, i) => i + 1), 'a replay on A from 0 has every event, without gaps');
  t.match(replay.map((e) => e.type), ['status_changed', 'status_changed'], 'queued on A, then started on B');
  t.equal(replay[replay.length - 1]?.type, 'finished');
  const status = await a.client.request<{ jobs: Record<string, number> }>('daemon/status');
  t.equal(status.jobs['running'], 1, 'counts are the cluster\'s');

  // The engine's log is in B's run folder: A reads it from B.
  for (const format of ['raw', 'text']) {
    const onB = await b.client.request<{ data: string; eof: boolean }>('jobs/logs', { job_id: job.job_id, format });
    t.match(onB, { data: /from b/, eof: true });
    t.same(await a.client.request('jobs/logs', { job_id: job.job_id, format }), onB, `jobs/logs (${format}) on A gives what B has`);
  }
  t.match(await rpcError(a.client.request('jobs/logs', { job_id: job.job_id, attempt: 2 })), { dataCode: 'INVALID_PARAMS' }, 'B\'s refusal comes back as B gave it');
  const artifact = await b.client.request<{ data: string }>('jobs/artifact', { job_id: job.job_id, path: 'report.txt' });
  t.equal(Buffer.from(artifact.data, 'base64').toString(), 'the report\n');
  t.same(await a.client.request('jobs/artifact', { job_id: job.job_id, path: 'report.txt' }), artifact, 'A reads an artifact from B');
  t.match(await rpcError(a.client.request('jobs/artifact', { job_id: job.job_id, path: 'leak.txt' })), { dataCode: 'ARTIFACT_NOT_FOUND', details: { reason: 'outside' } }, 'and B\'s refusal');
  await b.daemon.stop();
  t.match(await rpcError(a.client.request('jobs/logs', { job_id: job.job_id })), { dataCode: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-b', in_doubt: false } }, 'B stopped: A says where the logs are');
  t.match(await a.client.request('jobs/logs', { job_id: hang.job_id }), { eof: false }, 'A reads its own job\'s logs itself');
  await a.client.request('jobs/cancel', { job_id: hang.job_id });
});

t.test('jobs from three hosts run once each, on one host, and the queue is shared (QUEUE_FULL counts the cluster)', { skip }, async (t) => {
  const url = await sharedStore();
  const hosts = [await host(t, url, 'host-a', { max_concurrent: 2, max_queue: 40 }), await host(t, url, 'host-b', { max_concurrent: 2, max_queue: 40 }), await host(t, url, 'host-c', { max_concurrent: 2, max_queue: 40 })];
  const jobs: JobView[] = [];
  for (let i = 0; i < 30; i += 1) jobs.push(await create(hosts[i % 3] as Host, { emit: { greeting: `n${i}` } }, { engine: ENGINE_NAMES[i % 4] }));
  for (const [i, job] of jobs.entries()) {
    const done = await waitForStatus((hosts[(i + 1) % 3] as Host).client, job.job_id);
    t.equal(done.status, 'succeeded', `${job.job_id}: ${JSON.stringify(done.error)}`);
  }
  const places = jobs.map((job) => ranOn(hosts, job.job_id));
  t.same(places.filter((p) => p.length !== 1), [], 'each job ran on exactly one host');
  for (const job of jobs) {
    const where = hosts.find((h) => h.id === ranOn(hosts, job.job_id)[0]) as Host;
    t.equal((await where.daemon.engineCalls(job.job_id)).length, 1, `${job.job_id}: one engine run`);
  }
  t.ok(new Set(places.flat()).size >= 2, `the work was shared (${JSON.stringify(Object.fromEntries(hosts.map((h) => [h.id, places.filter((p) => p[0] === h.id).length])))})`);

  // Fill every slot, then the shared queue: the cluster's queued jobs count against max_queue.
  const small = hosts.map((h) => h);
  const hangs = await Promise.all(small.flatMap((h) => [create(h, { scenario: 'hang' }), create(h, { scenario: 'hang' })]));
  for (const hang of hangs) await waitForStatus(small[0]?.client as RpcClient, hang.job_id, ['running']);
  const waiting: JobView[] = [];
  for (let i = 0; i < 40; i += 1) waiting.push(await create(small[i % 3] as Host, { emit: { greeting: `w${i}` } }));
  const full = await rpcError(create(small[1] as Host, {}));
  t.equal(full.dataCode, 'QUEUE_FULL', 'the 41st queued job in the cluster is refused, whichever host is asked');
  t.match(await small[2]?.client.request('daemon/status'), { slots: { max: 2, used: 2, queued: 40 } }, 'the shared queue is in every host\'s count');
  for (const hang of hangs) await small[0]?.client.request('jobs/cancel', { job_id: hang.job_id }).catch(() => undefined);
  for (const job of waiting) t.equal((await waitForStatus(small[2]?.client as RpcClient, job.job_id)).status, 'succeeded');
});

t.test('a reply or cancel sent to C for a job A holds is carried out by A, in its live process, and answered once stored', { skip }, async (t) => {
  const url = await sharedStore();
  const a = await host(t, url, 'host-a', { max_concurrent: 2, engines: STICKY_ENGINES });
  // C cannot start codex: the codex jobs are A's.
  const c = await host(t, url, 'host-c', { engines: { codex: { command: ['/nonexistent/codex'] } } });
  const sticky = await create(a, { scenario: 'ask' }, { execution_mode: 'interactive' });
  t.match(await waitForStatus(c.client, sticky.job_id, ['waiting_user']), { interactive_profile: { kind: 'sticky_process' } });
  const enginePid = await a.daemon.enginePid(sticky.job_id);

  const stale = await rpcError(c.client.request('jobs/reply', { job_id: sticky.job_id, interaction_id: 7, response: 'wrong one' }));
  t.match(stale, { dataCode: 'INTERACTION_STALE' }, 'A\'s refusal comes back to C with its code');
  const answer = await c.client.request('jobs/reply', { job_id: sticky.job_id, interaction_id: 1, response: '--from c', idempotency_key: 'k1' });
  t.match(answer, { job_id: sticky.job_id, accepted: true });
  t.same((await c.client.request<{ interactions: Array<{ response: unknown }> }>('jobs/history', { job_id: sticky.job_id })).interactions.map((i) => i.response), ['--from c'], 'stored before C answered');
  t.match(await waitForStatus(c.client, sticky.job_id), { status: 'succeeded' });
  t.match(await c.client.request('jobs/result', { job_id: sticky.job_id }), { output: { reply: '--from c' } });
  const calls = await a.daemon.engineCalls(sticky.job_id);
  t.equal(calls.length, 2);
  t.equal(new Set(calls.map(processOf)).size, 1, 'the reply went to the live engine process on A');
  t.equal(calls[1]?.prompt, '--from c', 'as sent');
  await waitUntilGone(enginePid);
  t.same(ranOn([a, c], sticky.job_id), ['host-a']);

  const hang = await create(c, { scenario: 'hang' });
  await waitForStatus(c.client, hang.job_id, ['running']);
  const hangPid = await a.daemon.enginePid(hang.job_id);
  t.match(await c.client.request('jobs/cancel', { job_id: hang.job_id }), { job_id: hang.job_id, accepted: true }, 'canceled through C');
  t.match(await waitForStatus(c.client, hang.job_id), { status: 'canceled', error: { code: 'CANCELED_BY_USER' } });
  await waitUntilGone(hangPid);
});

t.test('a second daemon under a host id that is alive is refused at start', { skip }, async (t) => {
  const url = await sharedStore();
  await host(t, url, 'twin');
  const folder = await mkdtemp(join(tmpdir(), 'skilld-twin-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  await t.rejects(TestDaemon.start({ dir: folder, store: 'files', config: { store: url, host_id: 'twin' } }), /another skilld runs as host "twin"/);
});

t.test('a host that stops renewing its lease: its jobs are settled by another as its restart would; resumable jobs wait for it, then HOST_LOST', { skip }, async (t) => {
  const url = await sharedStore();
  const lease = { lease_ttl_ms: 5000 };
  const a = await host(t, url, 'host-a', { ...lease, max_concurrent: 3, engines: STICKY_ENGINES });
  const running = await create(a, { scenario: 'hang' });
  const sticky = await create(a, { scenario: 'ask' }, { execution_mode: 'interactive' });
  t.match(sticky, { interactive_profile: { kind: 'sticky_process' } });
  await waitForStatus(a.client, running.job_id, ['running']);
  await waitForStatus(a.client, sticky.job_id, ['waiting_user']);
  // B cannot start codex: A's codex jobs stay A's to run (a job whose engine no live host has would come to B, and fail there).
  const noCodex = { codex: { command: ['/nonexistent/codex'] } };
  const b = await host(t, url, 'host-b', { ...lease, pinned_grace_sec: 3600, engines: noCodex });
  const pids = [await a.daemon.enginePid(running.job_id), await a.daemon.enginePid(sticky.job_id)];

  await a.daemon.kill();
  const interrupted = await waitForStatus(b.client, running.job_id);
  t.match(interrupted, { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED', message: /host "host-a" stopped renewing its lease/ } });
  t.match(await waitForStatus(b.client, sticky.job_id), { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST' } });
  // The engines were on A: B cannot reach them; A's next start stops them.
  const a2 = await host(t, url, 'host-a', { ...lease, max_concurrent: 3 }, a.daemon.dir);
  for (const pid of pids) await waitUntilGone(pid);

  // A resumable job waiting on A when A goes: it waits for A, and continues there.
  const resumable = await create(a2, { scenario: 'ask' }, { execution_mode: 'interactive' });
  t.match(await waitForStatus(a2.client, resumable.job_id, ['waiting_user']), { interactive_profile: { kind: 'resumable' } });
  await a2.daemon.kill();
  const reaped = await b.daemon.logged((line) => line.includes('took a host for gone') && line.includes('"taken":0'));
  t.ok(reaped, 'B took A for gone again');
  t.match(await b.client.request('jobs/get', { job_id: resumable.job_id }), { status: 'waiting_user' }, 'a resumable wait is left for A');
  const reply = await rpcError(b.client.request('jobs/reply', { job_id: resumable.job_id, interaction_id: 1, response: 'later' }));
  t.match(reply, { dataCode: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-a' } }, 'a reply on B names the host that holds the job');
  const a3 = await host(t, url, 'host-a', { ...lease }, a.daemon.dir);
  await a3.client.request('jobs/reply', { job_id: resumable.job_id, interaction_id: 1, response: 'back again' });
  t.match(await waitForStatus(a3.client, resumable.job_id), { status: 'succeeded' });
  t.match(await a3.client.request('jobs/result', { job_id: resumable.job_id }), { output: { reply: 'back again' } }, 'A came back and the job continued there');

  // Gone for longer than the grace: the job fails with HOST_LOST, decided once, by the host whose grace ran out.
  const orphan = await create(a3, { scenario: 'ask' }, { execution_mode: 'interactive' });
  await waitForStatus(a3.client, orphan.job_id, ['waiting_user']);
  await a3.daemon.kill();
  const c = await host(t, url, 'host-c', { ...lease, pinned_grace_sec: 0, engines: noCodex });
  t.match(await waitForStatus(c.client, orphan.job_id), { status: 'failed', error: { code: 'HOST_LOST', message: /host "host-a"/ } });
});

t.test('a host that restarts under its own host_id, before it is taken for gone, takes up its running turn and its live session (docs/restarts.md)', { skip }, async (t) => {
  const url = await sharedStore();
  const a = await host(t, url, 'host-a', { max_concurrent: 3, engines: STICKY_ENGINES });
  const running = await create(a, { release_file: 'release', emit: { greeting: 'kept' } }, { skill_id: 'echo-auto' });
  const live = await create(a, { scenario: 'ask' }, { execution_mode: 'interactive' });
  t.match(live, { interactive_profile: { kind: 'sticky_process' } });
  await waitForStatus(a.client, running.job_id, ['running']);
  await waitForStatus(a.client, live.job_id, ['waiting_user']);
  const pids = [await a.daemon.enginePid(running.job_id), await a.daemon.enginePid(live.job_id)];
  await a.daemon.kill();

  const a2 = await host(t, url, 'host-a', { max_concurrent: 3, engines: STICKY_ENGINES }, a.daemon.dir);
  t.match(await a2.client.request('jobs/get', { job_id: running.job_id }), { status: 'running' }, 'the turn goes on');
  t.match(await a2.client.request('jobs/get', { job_id: live.job_id }), { status: 'waiting_user' }, 'the live session keeps waiting');
  await a2.daemon.release(running.job_id);
  await a2.client.request('jobs/reply', { job_id: live.job_id, interaction_id: 1, response: 'after the restart' });
  t.match(await waitForStatus(a2.client, running.job_id), { status: 'succeeded' });
  t.match(await waitForStatus(a2.client, live.job_id), { status: 'succeeded' });
  const calls = await a2.daemon.engineCalls(live.job_id);
  t.same(new Set(calls.map((call) => processOf(call))).size, 1, 'the same live process took the reply');
  for (const pid of pids) await waitUntilGone(pid);
});

t.test('a host taken for gone while it was stopped stops itself when it runs again (exit 75), and its engine with it', { skip }, async (t) => {
  const url = await sharedStore();
  const lease = { lease_ttl_ms: 5000 };
  const b = await host(t, url, 'host-b', { ...lease, max_concurrent: 1 });
  const blocker = await create(b, { scenario: 'hang' });
  await waitForStatus(b.client, blocker.job_id, ['running']);
  // Run on A: B has no slot free.
  const a = await host(t, url, 'host-a', lease);
  const job = await create(a, { scenario: 'hang' });
  await waitForStatus(a.client, job.job_id, ['running']);
  const pid = await a.daemon.enginePid(job.job_id);
  a.daemon.child.kill('SIGSTOP');
  t.teardown(() => a.daemon.child.kill('SIGCONT'));
  t.match(await waitForStatus(b.client, job.job_id), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } });
  const exited = once(a.daemon.child, 'exit');
  a.daemon.child.kill('SIGCONT');
  const [code] = (await exited) as [number | null];
  t.equal(code, 75, 'A found its lease taken and stopped, asking to be started again');
  await waitUntilGone(pid);
  t.match(await b.client.request('jobs/get', { job_id: job.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } }, 'what B decided stands');
  await b.client.request('jobs/cancel', { job_id: blocker.job_id });
});

t.test('daemon/hosts and skillctl hosts: every host of the store, its state and lease, the jobs it holds; a stopped one says so; jobs/get and show name the host that holds a job', { skip }, async (t) => {
  const url = await sharedStore();
  const a = await host(t, url, 'host-a', { max_concurrent: 2 });
  const b = await host(t, url, 'host-b', { max_concurrent: 3 });
  const hang = await create(a, { scenario: 'hang' });
  await waitForStatus(a.client, hang.job_id, ['running']);
  const { hosts } = await b.client.request<{ hosts: Array<Record<string, unknown>> }>('daemon/hosts');
  const holder = ranOn([a, b], hang.job_id)[0];
  t.match(hosts, [
    { host_id: 'host-a', state: 'live', lease_until: String, max_concurrent: 2, jobs: { running: holder === 'host-a' ? 1 : 0, waiting_user: 0, queued: 0 } },
    { host_id: 'host-b', state: 'live', lease_until: String, max_concurrent: 3, jobs: { running: holder === 'host-b' ? 1 : 0, waiting_user: 0, queued: 0 } },
  ]);
  t.equal(hosts.length, 2);
  const table = await runSkillctl(['hosts', '--socket', a.daemon.socket], process.env);
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /^HOST +STATE +LEASE LEFT +VERSION +SLOTS +JOBS\nhost-a +live +\S+ +\S+ +2 +\d running, 0 waiting, 0 queued\nhost-b +live +\S+ +\S+ +3 +\d running, 0 waiting, 0 queued\n$/);
  // Which host holds a job, asked of either host: jobs/get, jobs/list and skillctl show.
  for (const asked of [a, b]) {
    t.match(await asked.client.request('jobs/get', { job_id: hang.job_id }), { host: holder }, `jobs/get on ${asked.id}`);
    t.match((await asked.client.request<{ jobs: unknown[] }>('jobs/list', { limit: 1 })).jobs, [{ job_id: hang.job_id, host: holder }]);
  }
  const shown = await runSkillctl(['show', hang.job_id, '--socket', b.daemon.socket], process.env);
  t.match(shown.stdout, new RegExp(`^host: +${holder}$`, 'm'), 'show names the host');
  await a.client.request('jobs/cancel', { job_id: hang.job_id });
  await b.daemon.stop();
  const after = await a.client.request<{ hosts: Array<{ host_id: string; state: string }> }>('daemon/hosts');
  // Stopped, its lease ends at once: host-a, once it has renewed its own for a whole lease (a busy
  // machine may get there during this test), takes what it left (docs/cluster.md), and it reads reaped.
  t.match(after.hosts.map((h) => [h.host_id, h.state]), [['host-a', 'live'], ['host-b', /^(stopped|reaped)$/]], 'a host that left says so');
  t.equal(after.hosts.length, 2);
});

t.test('retention across hosts: a job removed through one host loses its run folder on the host that ran it, at that host\'s next round', { skip }, async (t) => {
  const url = await sharedStore();
  const a = await host(t, url, 'host-a', { retention: { max_age: null, interval: '1s' } });
  const job = await create(a, { emit: { greeting: 'kept until pruned' } });
  t.equal((await waitForStatus(a.client, job.job_id)).status, 'succeeded');
  t.same(ranOn([a], job.job_id), ['host-a']);
  const b = await host(t, url, 'host-b', { retention: { max_age: null } });
  const pruned = await b.client.request<{ count: number; job_ids: string[] }>('jobs/prune', { older_than_sec: 0 });
  t.same(pruned.job_ids, [job.job_id], 'the records go once, through any host');
  t.equal((await rpcError(a.client.request('jobs/get', { job_id: job.job_id }))).dataCode, 'JOB_NOT_FOUND', 'for every host');
  await waitUntilRemoved(a.daemon.runDir(job.job_id), 60_000);
  t.pass('host-a removed the run folder it held');
});
