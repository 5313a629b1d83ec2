// A daemon whose store is PostgreSQL: jobs, rounds and events survive a restart; a database
// already used by another daemon, set up by a newer daemon, or not reachable stops start-up
// with a clear message.
import t from 'tap';
import pg from 'pg';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestDaemon, testPostgres, waitForStatus, type JobView } from '../helpers/daemon.js';
import type { ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;
const postgres = started as ThrowawayPostgres;
if (typeof started !== 'string') t.teardown(() => postgres.stop());

interface Event {
  seq: number;
  type: string;
  data: { to?: string };
}

t.test('jobs, rounds and events are kept in the database across a restart, numbered without gaps', { skip }, async (t) => {
  const first = await TestDaemon.start({ store: 'postgres' });
  t.teardown(() => first.stop());
  const c1 = await first.client();
  const auto = await c1.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'stored' } } });
  t.match(await waitForStatus(c1, auto.job_id), { status: 'succeeded' });
  const asked = await c1.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(c1, asked.job_id, ['waiting_user']);
  await first.stop();
  t.ok((await readFile(join(first.dir, 'store-url'), 'utf8')).startsWith('postgres://'));

  const again = await TestDaemon.start({ dir: first.dir, store: 'postgres' });
  t.teardown(() => again.cleanup());
  const c2 = await again.client();
  t.match(await c2.request('jobs/result', { job_id: auto.job_id }), { status: 'succeeded', output: { greeting: 'stored' } });
  const pending = await c2.request<{ pending: { interaction_id: number } }>('jobs/pending', { job_id: asked.job_id });
  await c2.request('jobs/reply', { job_id: asked.job_id, interaction_id: pending.pending.interaction_id, response: { text: '--verbatim' } });
  t.match(await waitForStatus(c2, asked.job_id), { status: 'succeeded' });
  const history = await c2.request<{ interactions: Array<{ response: unknown }> }>('jobs/history', { job_id: asked.job_id });
  t.same(history.interactions.map((i) => i.response), [{ text: '--verbatim' }], 'the reply, stored as sent');
  // Heard from before the subscription: the replay may come in the same read as its answer.
  const events: Event[] = [];
  const finished = new Promise<void>((resolve) => {
    c2.on('job/event', (params) => {
      events.push(params as Event);
      if ((params as Event).type === 'finished') resolve();
    });
  });
  const sub = await c2.request<{ subscription_id: string }>('jobs/subscribe', { job_id: asked.job_id, after_seq: 0 });
  t.ok(sub.subscription_id);
  await finished;
  t.same(events.map((e) => e.seq), events.map((_, i) => i + 1), 'one sequence across both daemons\' lives');
  const moves = events.filter((e) => e.type === 'status_changed').map((e) => e.data.to);
  t.same(moves, ['queued', 'running', 'waiting_user', 'queued', 'running', 'succeeded'], 'every move, before and after the restart');
  const listed = await c2.request<{ jobs: JobView[] }>('jobs/list', { id_prefix: auto.job_id.slice(0, 14) });
  t.ok(listed.jobs.some((j) => j.job_id === auto.job_id), 'short ids work on the database too');
});

t.test('a second daemon on the same database under the same host id (the hostname, by default) stops at start; the first keeps working', { skip }, async (t) => {
  const first = await TestDaemon.start({ store: 'postgres' });
  t.teardown(() => first.cleanup());
  const url = await readFile(join(first.dir, 'store-url'), 'utf8');
  await t.rejects(TestDaemon.start({ config: { store: url } }), /exited with 1 before ready: skilld: cannot start: another skilld runs as host ".+" on this store \(its lease is current\); give each daemon its own host_id/);
  t.match(await (await first.client()).request('daemon/ping'), { ok: true });
});

t.test('a database set up by a newer daemon is refused, and left as it was', { skip }, async (t) => {
  const url = await postgres.createDatabase('newer');
  const first = await TestDaemon.start({ config: { store: url } });
  await first.cleanup();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  const steps = async (): Promise<number | undefined> => (await client.query<{ n: number }>('SELECT count(*)::integer AS n FROM skilld.schema_migrations')).rows[0]?.n;
  await client.query("INSERT INTO skilld.schema_migrations (version, name, daemon_version) VALUES (1000, 'later', '99.0.0')");
  const before = await steps();
  await t.rejects(TestDaemon.start({ config: { store: url } }), /exited with 1 before ready: skilld: cannot start: the database schema is version 1000, newer than this daemon's/);
  t.equal(await steps(), before, 'nothing changed');
});

t.test('a database that cannot be reached stops start-up, naming the problem', { skip }, async (t) => {
  const url = `postgres://skilld@${encodeURIComponent(join(postgres.dir, 'nowhere'))}/postgres`;
  await t.rejects(TestDaemon.start({ config: { store: url } }), /exited with 1 before ready: skilld: cannot start: connect ENOENT/);
});
