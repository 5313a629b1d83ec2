// Disk full: a failed write fails only its own request, with a stable retryable code; reads keep
// working; nothing acknowledged is lost; the daemon recovers by itself when space returns.
import t from 'tap';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcClient } from '../../rpc/client.js';
import { FILES_ONLY, TestDaemon, rpcError, waitForStatus, type JobView } from '../helpers/daemon.js';
import { mountSmallDisk } from '../helpers/tmpfs.js';

const disk = await mountSmallDisk('2m');
// The state lives on the small disk only with the files store; a database outage is tested apart.
const skip = FILES_ONLY || (typeof disk === 'string' ? disk : false);

t.test('disk full crashes the daemon: ENOSPC fails only the request that writes, with STORAGE_UNAVAILABLE, and everything recovers', { skip }, async (t) => {
  if (typeof disk === 'string') return;
  t.teardown(() => disk.unmount());
  const outside = await mkdtemp(join(tmpdir(), 'skilld-release-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  const release = join(outside, 'release');

  // The disk fills up: the running job's release file lives elsewhere, which a job's sandbox would hide.
  let daemon = await TestDaemon.start({ dir: disk.dir, config: { sandbox: 'off' } });
  t.teardown(() => daemon.stop());
  let client: RpcClient = await daemon.client();
  const acknowledged: string[] = [];
  const create = async (input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<JobView> => {
    const job = await client.request<JobView>('jobs/create', { skill_id: extra['execution_mode'] === 'interactive' ? 'echo-both' : 'echo-auto', engine: 'codex', input, ...extra });
    acknowledged.push(job.job_id);
    return job;
  };

  const done = await create({ emit: { greeting: 'before' } });
  await waitForStatus(client, done.job_id);
  const running = await create({ release_file: release, emit: { greeting: 'through the outage' } });
  await waitForStatus(client, running.job_id, ['running']);
  const waiting = await create({ scenario: 'ask' }, { execution_mode: 'interactive' });
  await waitForStatus(client, waiting.job_id, ['waiting_user']);

  await disk.fill();
  t.teardown(() => disk.free().catch(() => undefined));

  await t.test('a create that fails halfway leaves a ghost: a refused create adds no job, no folder, and takes no place in max_queue', async (t) => {
    const counts = (await client.request<{ jobs: Record<string, number> }>('daemon/status')).jobs;
    const refused = await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} }));
    t.equal(refused.dataCode, 'STORAGE_UNAVAILABLE');
    t.equal(refused.rpcCode, 3004);
    t.match(refused.message, /ENOSPC/);
    t.same((await client.request<{ jobs: Record<string, number> }>('daemon/status')).jobs, counts, 'no job was added');
    t.same((await readdir(join(daemon.stateDir, 'runs'))).sort(), [...acknowledged].sort(), 'no run folder was left behind');
  });

  // A reply larger than a page cannot slip into the free end of a page the history file already has.
  const big = 'x'.repeat(16 * 1024);
  await t.test('a reply that cannot be stored is refused with STORAGE_UNAVAILABLE and moves nothing', async (t) => {
    const replyRefused = await rpcError(client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: big }));
    t.equal(replyRefused.dataCode, 'STORAGE_UNAVAILABLE');
    t.match(await client.request('jobs/get', { job_id: waiting.job_id }), { status: 'waiting_user', pending_interaction_id: 1 });
    t.match(await client.request('jobs/history', { job_id: waiting.job_id }), { interactions: [{ interaction_id: 1, response: null, replied_at: null }] }, 'nothing stored');
  });

  await t.test('a turn that ends during the outage stays running until its outcome can be stored; reads keep working', async (t) => {
    const retrying = daemon.logged((line) => line.includes(running.job_id) && line.includes('storage unavailable'));
    await writeFile(release, '');
    await retrying;
    t.match(await client.request('jobs/get', { job_id: running.job_id }), { status: 'running' });
    t.match(await client.request('daemon/ping'), { ok: true }, 'the daemon still answers');
    const list = await client.request<{ jobs: JobView[] }>('jobs/list', {});
    t.same(list.jobs.map((j) => j.job_id).sort(), [...acknowledged].sort(), 'every acknowledged job, nothing else');
  });

  await t.test('once the space is back, everything moves on by itself, without a restart', async (t) => {
    await disk.free();
    const finished = await waitForStatus(client, running.job_id);
    // Its engine wrote its last output to the full disk itself (docs/restarts.md, "Limits"): it
    // could not, and the turn ended as the engine did, explained, not stranded.
    t.match(finished, { status: 'failed', error: { code: /^ENGINE_/ } }, 'the turn that ended during the outage is settled');
    const after = await create({ emit: { greeting: 'after' } });
    t.equal((await waitForStatus(client, after.job_id)).status, 'succeeded', 'new jobs run again');
    await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: big });
    t.equal((await waitForStatus(client, waiting.job_id)).status, 'succeeded', 'the same reply, sent again, is taken');
    const status = await client.request<{ internal_errors: { count: number } }>('daemon/status');
    t.equal(status.internal_errors.count, 0, 'nothing escaped its handler');
  });

  await t.test('a crash after the outage loses nothing acknowledged and brings back nothing refused', async (t) => {
    await daemon.kill();
    daemon = await TestDaemon.start({ dir: disk.dir, config: { sandbox: 'off' } });
    client = await daemon.client();
    const reloaded = await client.request<{ jobs: JobView[] }>('jobs/list', {});
    t.same(reloaded.jobs.map((j) => j.job_id).sort(), [...acknowledged].sort(), 'exactly the acknowledged jobs');
    t.ok(reloaded.jobs.every((j) => j.status === (j.job_id === running.job_id ? 'failed' : 'succeeded')), 'all of them finished, none stranded');
    t.same((await client.request<{ notices: unknown[] }>('daemon/status')).notices, [], 'and the state files are intact');
  });

  await t.test('a daemon that starts on a full disk opens its state without writing, answers, and catches up once there is room', async (t) => {
    // A job's writes since the last start are in the journal, which a start compacts when it can.
    await waitForStatus(client, (await create({ emit: { greeting: 'journalled' } })).job_id);
    const before = await client.request<{ jobs: JobView[] }>('jobs/list', {});
    await disk.fill();
    await daemon.kill();
    daemon = await TestDaemon.start({ dir: disk.dir, config: { sandbox: 'off' } });
    client = await daemon.client();
    t.same((await client.request<{ jobs: JobView[] }>('jobs/list', {})).jobs.map((j) => j.job_id), before.jobs.map((j) => j.job_id), 'every job, read on a full disk');
    t.match((await client.request<{ notices: unknown[] }>('daemon/status')).notices, [{ code: 'STATE_COMPACTION_DEFERRED' }], 'it says the state waits to be compacted');
    t.equal((await rpcError(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} }))).dataCode, 'STORAGE_UNAVAILABLE', 'a write is refused as in any outage');
    await disk.free();
    const after = await create({ emit: { greeting: 'room again' } });
    t.equal((await waitForStatus(client, after.job_id)).status, 'succeeded', 'and it goes on once there is room');
  });
});
