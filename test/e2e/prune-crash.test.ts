// Pruned jobs never come back (docs/state.md): jobs canceled while queued, and jobs that
// succeeded, are pruned; the daemon is SIGKILLed after `jobs/prune` answered, and the next daemon
// on the same folder finds none of them — not queued again, not failed as interrupted. Every
// crash point on the way is checked in test/unit/store-crash-points.test.ts; this is the daemon.
import t from 'tap';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RpcCallError, RpcClient } from '../../rpc/client.js';
import { RELEASE_FILE, TestDaemon, waitForStatus, waitUntilRemoved, type JobView } from '../helpers/daemon.js';

const config = { max_concurrent: 1, max_queue: 400, retention: { max_age: null } };

interface PruneAnswer {
  count: number;
}

/** The jobs of `ids` the daemon knows, with their status. */
async function cameBack(client: RpcClient, ids: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of ids) {
    const job = await client.request<JobView>('jobs/get', { job_id: id }).catch((error: RpcCallError) => {
      if (error.dataCode === 'JOB_NOT_FOUND') return null;
      throw error;
    });
    if (job !== null) found.push(`${id} ${job.status}`);
  }
  return found;
}

t.test('300 canceled and 13 succeeded jobs pruned, then SIGKILL: none comes back', async (t) => {
  const daemon = await TestDaemon.start({ config });
  t.teardown(() => daemon.kill());
  const client = await daemon.client();
  // One job holds the only slot; the 300 behind it stay queued until they are canceled.
  const holder = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { release_file: RELEASE_FILE, emit: { greeting: 'held' } } });
  await waitForStatus(client, holder.job_id, ['running']);
  const queued: string[] = [];
  for (let i = 0; i < 300; i += 20) {
    const batch = await Promise.all(Array.from({ length: 20 }, () => client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'q' } } })));
    queued.push(...batch.map((job) => job.job_id));
  }
  for (const id of queued) await client.request('jobs/cancel', { job_id: id });
  const pruned = await client.request<PruneAnswer>('jobs/prune', { older_than_sec: 0, status: ['canceled'] });
  t.equal(pruned.count, 300, 'the prune answered 300 removed');
  // Killed once the run folders are gone too: a store that kept the records would bring back jobs without folders.
  for (const id of queued) await waitUntilRemoved(daemon.runDir(id));
  await daemon.kill();

  const second = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => second.kill());
  let c = await second.client();
  t.same(await cameBack(c, queued), [], 'no pruned job is there');
  t.same((await c.request<{ jobs: JobView[] }>('jobs/list', { status: 'queued', limit: 500 })).jobs.map((job) => job.job_id), [], 'nothing is queued again');
  // The holder's engine outlived its daemon and was taken up: released, it ends; then twelve jobs succeed and are pruned.
  await second.release(holder.job_id);
  t.equal((await waitForStatus(c, holder.job_id)).status, 'succeeded');
  const done: string[] = [holder.job_id];
  for (let i = 0; i < 12; i += 1) done.push((await c.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'd' } } })).job_id);
  for (const id of done) t.equal((await waitForStatus(c, id)).status, 'succeeded');
  t.equal((await c.request<PruneAnswer>('jobs/prune', { older_than_sec: 0, status: ['succeeded'] })).count, 13, 'the holder and the twelve');
  for (const id of done) await waitUntilRemoved(second.runDir(id));
  await second.kill();

  const third = await TestDaemon.start({ dir: daemon.dir, config });
  t.teardown(() => third.cleanup());
  c = await third.client();
  t.same(await cameBack(c, [...queued, ...done]), [], 'no pruned job came back');
  const runs = await readdir(join(third.dir, 'state', 'runs'));
  t.same(runs.filter((name) => queued.includes(name) || done.includes(name)), [], 'no run folder of a pruned job');
  t.same((await c.request<{ jobs: JobView[] }>('jobs/list', { limit: 500 })).jobs, [], 'no job is left');
});
