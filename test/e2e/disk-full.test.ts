// Disk full: a failed write fails only its own request, with a stable retryable code; reads keep
// working; nothing acknowledged is lost; the daemon recovers by itself when space returns.
import t from 'tap';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { mountSmallDisk } from '../helpers/tmpfs.js';

const disk = await mountSmallDisk('2m');
const skip = typeof disk === 'string' ? disk : false;

async function refusal(promise: Promise<unknown>): Promise<RpcCallError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof RpcCallError)) throw new Error(`expected an error answer, got ${String(error)}`);
  return error;
}

t.test('disk full crashes the daemon: ENOSPC fails only the request that writes, with STORAGE_UNAVAILABLE, and everything recovers', { skip }, async (t) => {
  if (typeof disk === 'string') return;
  t.teardown(() => disk.unmount());
  const outside = await mkdtemp(join(tmpdir(), 'skilld-release-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  const release = join(outside, 'release');

  let daemon = await TestDaemon.start({ dir: disk.dir });
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

  const counts = (await client.request<{ jobs: Record<string, number> }>('daemon/status')).jobs;
  const refused = await refusal(client.request('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} }));
  t.equal(refused.dataCode, 'STORAGE_UNAVAILABLE');
  t.equal(refused.rpcCode, 3004);
  t.match(refused.message, /ENOSPC/);
  // A create that fails halfway leaves a ghost: no queued job that never runs, no folder.
  t.same((await client.request<{ jobs: Record<string, number> }>('daemon/status')).jobs, counts, 'no job was added, none counts against max_queue');
  t.same((await readdir(join(daemon.stateDir, 'runs'))).sort(), [...acknowledged].sort(), 'no run folder was left behind');
  // A reply larger than a page cannot slip into the free end of a page the history file already has.
  const big = 'x'.repeat(16 * 1024);
  const replyRefused = await refusal(client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: big }));
  t.equal(replyRefused.dataCode, 'STORAGE_UNAVAILABLE');
  t.match(await client.request('jobs/get', { job_id: waiting.job_id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'the refused reply moved nothing');
  t.match(await client.request('jobs/history', { job_id: waiting.job_id }), { interactions: [{ interaction_id: 1, response: null, replied_at: null }] }, 'and stored nothing');

  // The running turn ends while nothing can be written: the job is not lost, and not decided twice.
  const retrying = daemon.logged((line) => line.includes(running.job_id) && line.includes('storage unavailable'));
  await writeFile(release, '');
  await retrying;
  t.match(await client.request('jobs/get', { job_id: running.job_id }), { status: 'running' }, 'the ended turn waits, running, for its outcome to be stored');
  t.match(await client.request('daemon/ping'), { ok: true }, 'the daemon still answers');
  const list = await client.request<{ jobs: JobView[] }>('jobs/list', {});
  t.same(list.jobs.map((j) => j.job_id).sort(), [...acknowledged].sort(), 'reads work: every acknowledged job, nothing else');

  await disk.free();
  const finished = await waitForStatus(client, running.job_id);
  t.equal(finished.status, 'succeeded', 'the turn that ended during the outage is settled once the space is back');
  t.match(await client.request('jobs/result', { job_id: running.job_id }), { output: { greeting: 'through the outage' } });
  const after = await create({ emit: { greeting: 'after' } });
  t.equal((await waitForStatus(client, after.job_id)).status, 'succeeded', 'new jobs run again without a restart');
  await client.request('jobs/reply', { job_id: waiting.job_id, interaction_id: 1, response: big });
  t.equal((await waitForStatus(client, waiting.job_id)).status, 'succeeded', 'the same reply, sent again, is taken');
  const status = await client.request<{ internal_errors: { count: number } }>('daemon/status');
  t.equal(status.internal_errors.count, 0, 'nothing escaped its handler');

  // A crash now loses nothing that was acknowledged, and brings back nothing that was refused.
  await daemon.kill();
  daemon = await TestDaemon.start({ dir: disk.dir });
  client = await daemon.client();
  const reloaded = await client.request<{ jobs: JobView[] }>('jobs/list', {});
  t.same(reloaded.jobs.map((j) => j.job_id).sort(), [...acknowledged].sort(), 'after a restart: exactly the acknowledged jobs');
  t.ok(reloaded.jobs.every((j) => j.status === 'succeeded'), 'all of them finished, none stranded');
  t.same((await client.request<{ notices: unknown[] }>('daemon/status')).notices, [], 'and the state files are intact');
});
