import t from 'tap';
import type { Job } from '../../daemon/model/job.js';
import type { JobStatus } from '../../daemon/model/states.js';
import { JobIndex } from '../../daemon/store/job-index.js';

/** A job created `n` seconds after a fixed origin, with the id given. */
function makeJob(id: string, n: number, status: JobStatus = 'queued'): Job {
  const created = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
  return {
    job_id: id, skill_id: n % 2 === 0 ? 'even' : 'odd', skill_version: '1.0.0', engine: 'codex', execution_mode: 'auto', status,
    interactive_require_user_reply: true, session_timeout_sec: 1200, hard_timeout_sec: 3600, model: null, interactive_profile: null,
    attempt: 0, max_attempt: null, pending_interaction_id: null, wait_deadline_at: null, session_handle: null, warnings: [], error: null,
    created_at: created, updated_at: created, started_at: null, finished_at: null,
  };
}

const ids = (page: { jobs: Job[] }): string[] => page.jobs.map((job) => job.job_id);

t.test('id_prefix: only the ids that start with it, newest first, with the other filters and paging', async (t) => {
  const index = new JobIndex();
  // Created in this order; their ids do not sort in creation order.
  const order = ['job-b2', 'job-a1', 'job-b10', 'job-c', 'job-b1', 'job-a2', 'job-b'];
  order.forEach((id, n) => index.put(makeJob(id, n, n === 4 ? 'running' : 'queued')));
  t.same(ids(index.list({ id_prefix: 'job-b', limit: 50 })), ['job-b', 'job-b1', 'job-b10', 'job-b2'], 'newest first, not in id order');
  t.same(ids(index.list({ id_prefix: 'job-b1', limit: 50 })), ['job-b1', 'job-b10']);
  t.same(ids(index.list({ id_prefix: 'job-b10', limit: 50 })), ['job-b10']);
  t.same(ids(index.list({ id_prefix: 'job-z', limit: 50 })), []);
  t.same(ids(index.list({ id_prefix: 'job-', limit: 50 })), [...order].reverse());
  t.same(ids(index.list({ id_prefix: 'job-b', status: 'running', limit: 50 })), ['job-b1']);
  t.same(ids(index.list({ id_prefix: 'job-a', skill_id: 'odd', limit: 50 })), ['job-a2', 'job-a1']);
  t.same(ids(index.list({ id_prefix: 'job-b', skill_id: 'odd', limit: 50 })), []);
  t.same(index.list({ id_prefix: 'job-b', limit: 2 }), { jobs: [index.get('job-b'), index.get('job-b1')], next: 'job-b1' });
  t.same(ids(index.list({ id_prefix: 'job-b', before: 'job-b1', limit: 2 })), ['job-b10', 'job-b2'], 'the next page');
  t.same(index.list({ id_prefix: 'job-b', before: 'job-b1', limit: 2 }).next, null);
  t.same(ids(index.list({ id_prefix: 'job-a', before: 'job-b1', limit: 50 })), ['job-a1']);
});

t.test('ids added after a lookup are found too, in and out of order; a status change adds no id', async (t) => {
  const index = new JobIndex();
  index.put(makeJob('job-m', 0));
  t.same(ids(index.list({ id_prefix: 'job-m', limit: 5 })), ['job-m']);
  index.put(makeJob('job-n', 1));
  index.put(makeJob('job-ma', 2));
  index.put({ ...makeJob('job-m', 0), status: 'running' });
  t.same(ids(index.list({ id_prefix: 'job-m', limit: 5 })), ['job-ma', 'job-m']);
  t.same(ids(index.list({ id_prefix: 'job-n', limit: 5 })), ['job-n']);
  t.equal(index.counts().running, 1);
});

t.test('ids random at their start: found by prefix after a bulk load and as each new one comes, listed by creation', async (t) => {
  const index = new JobIndex();
  const loaded = ['job-f0-1', 'job-0a-2', 'job-7c-3', 'job-0b-4'];
  loaded.forEach((id, n) => index.put(makeJob(id, n, 'succeeded')));
  index.sort();
  t.same(ids(index.list({ id_prefix: 'job-0', limit: 5 })), ['job-0b-4', 'job-0a-2']);
  for (const [n, id] of ['job-00-5', 'job-ff-6', 'job-0a-7'].entries()) index.put(makeJob(id, 10 + n));
  t.same(ids(index.list({ id_prefix: 'job-0a', limit: 5 })), ['job-0a-7', 'job-0a-2'], 'a new id in its place');
  t.same(ids(index.list({ id_prefix: 'job-', limit: 10 })), ['job-0a-7', 'job-ff-6', 'job-00-5', 'job-0b-4', 'job-7c-3', 'job-0a-2', 'job-f0-1'], 'newest first, whatever the ids');
});

t.test('removed jobs are gone from lookups, pages, prefixes and counts, before and after the lists are rebuilt', async (t) => {
  const index = new JobIndex();
  const all = Array.from({ length: 20 }, (_, n) => `job-${String.fromCharCode(97 + n)}${n % 3}`);
  all.forEach((id, n) => index.put(makeJob(id, n, n % 2 === 0 ? 'succeeded' : 'queued')));
  t.ok(index.list({ id_prefix: 'job-a', limit: 1 }).jobs.length === 1, 'prefix lookups sorted the ids');
  index.remove(['job-b1', 'job-c2', 'job-nope']);
  t.notOk(index.has('job-b1'));
  t.equal(index.get('job-c2'), undefined);
  const listed = (query: Partial<Parameters<JobIndex['list']>[0]> = {}): string[] => ids(index.list({ limit: 50, ...query }));
  const kept = all.filter((id) => id !== 'job-b1' && id !== 'job-c2');
  t.same(listed(), [...kept].reverse(), 'listed without them (the lists still hold their ids)');
  t.same(listed({ id_prefix: 'job-b' }), []);
  t.same(ids(index.list({ limit: 2, before: 'job-d0' })), ['job-a0'], 'a cursor past a removed job');
  t.same(index.counts(), { queued: 9, running: 0, waiting_user: 0, succeeded: 9, failed: 0, canceled: 0 });
  index.remove(all.slice(4, 12));
  const rest = kept.filter((id) => !all.slice(4, 12).includes(id));
  t.same(listed(), [...rest].reverse(), 'and after the lists were rebuilt');
  t.same(ids(index.list({ limit: 1, before: 'job-m0' })), ['job-d0']);
  index.put(makeJob('job-b1', 30));
  t.same(listed({ id_prefix: 'job-b' }), ['job-b1'], 'an id may come back as a new job');
  t.same(listed({ limit: 1 }), ['job-b1']);
});

t.test('an id removed and put again before the lists dropped it is listed once', async (t) => {
  const index = new JobIndex();
  ['job-a', 'job-b', 'job-c', 'job-d', 'job-e'].forEach((id, n) => index.put(makeJob(id, n, 'succeeded')));
  index.list({ id_prefix: 'job-', limit: 1 });
  index.remove(['job-b']);
  index.put(makeJob('job-b', 9));
  t.same(ids(index.list({ limit: 50 })), ['job-b', 'job-e', 'job-d', 'job-c', 'job-a']);
  t.same(ids(index.list({ id_prefix: 'job-b', limit: 50 })), ['job-b']);
  t.equal(index.counts().queued, 1);
});
