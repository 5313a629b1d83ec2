// Requests between hosts (daemon/cluster/mailbox.ts) on a real PostgreSQL: carried out by the
// holder and answered once stored; withdrawn when the holder does not take them in a lease, so
// they never land later; in doubt when the holder went away while carrying one out.
import t, { type Test } from 'tap';
import { HostLease } from '../../daemon/cluster/host-lease.js';
import { ANSWERS_CHANNEL, Mailbox, REQUESTS_CHANNEL, type Carry, type RoutedMethod } from '../../daemon/cluster/mailbox.js';
import { createLogger } from '../../daemon/base/logger.js';
import { Listener } from '../../daemon/store/pg/listener.js';
import { migrate } from '../../daemon/store/pg/migrations.js';
import { openPool, type Pool } from '../../daemon/store/pg/pool.js';
import { SkilldError } from '../../rpc/errors.js';
import { testPostgres } from '../helpers/daemon.js';
import { stillClock } from '../helpers/fake-clock.js';
import type { ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;
const postgres = started as ThrowawayPostgres;
if (typeof started !== 'string') t.teardown(() => postgres.stop());

const logger = createLogger('silent');

interface Host {
  id: string;
  lease: HostLease;
  mailbox: Mailbox;
}

async function database(t: Test): Promise<{ url: string; pool: Pool }> {
  const url = await postgres.createDatabase('mailbox');
  const pool = openPool(url, logger);
  t.teardown(() => pool.end());
  await migrate(pool, 'test');
  return { url, pool };
}

/** A host that joined, whose mailbox hears the announcements as a daemon's does. */
async function host(t: Test, url: string, pool: Pool, id: string): Promise<Host> {
  const lease = new HostLease(pool, id, 15_000);
  await lease.join(`token-${id}`, ['codex'], { version: 'test', pid: 1, max_concurrent: 1 });
  const mailbox = new Mailbox(pool, lease, stillClock, logger);
  const listener = new Listener(url, stillClock, logger, new Map([
    [REQUESTS_CHANNEL, (payload: string) => (payload === id ? void mailbox.drain() : undefined)],
    [ANSWERS_CHANNEL, (payload: string) => mailbox.answered(payload)],
  ]), () => mailbox.caughtUp());
  await listener.start();
  t.teardown(async () => {
    mailbox.stop();
    await listener.close();
  });
  return { id, lease, mailbox };
}

async function requestStates(pool: Pool): Promise<string[]> {
  return (await pool.query<{ state: string }>('SELECT state FROM skilld.requests ORDER BY seq')).rows.map((row) => row.state);
}

async function rejection(promise: Promise<unknown>): Promise<SkilldError> {
  const error = await promise.then(() => new Error('resolved'), (e: unknown) => e);
  if (!(error instanceof SkilldError)) throw error;
  return error;
}

t.test('carried out by the holder, in order, answered with its result or its error; nothing left behind', { skip }, async (t) => {
  const { url, pool } = await database(t);
  const a = await host(t, url, pool, 'host-a');
  const b = await host(t, url, pool, 'host-b');
  const carried: unknown[] = [];
  const carry: Carry = async (method, params) => {
    carried.push([method, params]);
    if (params['response'] === 'stale') throw new SkilldError('INTERACTION_STALE', 'interaction 1 is not the pending one', { details: { pending: 2 } });
    if (params['response'] === 'bug') throw new TypeError('a bug');
    return { job_id: params['job_id'], status: 'running', accepted: true };
  };
  // Left while A does not carry out requests yet (a daemon that is still recovering), then taken in the order sent.
  const first = b.mailbox.send('host-a', 'job-1', 'jobs/reply', { job_id: 'job-1', interaction_id: 1, response: '--verbatim' });
  await waitFor(async () => (await requestStates(pool)).length === 1);
  const second = b.mailbox.send('host-a', 'job-1', 'jobs/cancel', { job_id: 'job-1' });
  await waitFor(async () => (await requestStates(pool)).length === 2);
  a.mailbox.start(carry);
  t.same(await first, { job_id: 'job-1', status: 'running', accepted: true });
  t.same(await second, { job_id: 'job-1', status: 'running', accepted: true });
  t.same(carried, [['jobs/reply', { job_id: 'job-1', interaction_id: 1, response: '--verbatim' }], ['jobs/cancel', { job_id: 'job-1' }]], 'in the order sent, params verbatim');

  const stale = await rejection(b.mailbox.send('host-a', 'job-1', 'jobs/reply', { job_id: 'job-1', interaction_id: 1, response: 'stale' }));
  t.match(stale, { code: 'INTERACTION_STALE', message: 'interaction 1 is not the pending one', details: { pending: 2 } }, 'the holder\'s error, whole');
  const bug = await rejection(b.mailbox.send('host-a', 'job-1', 'jobs/reply', { job_id: 'job-1', interaction_id: 1, response: 'bug' }));
  t.match(bug, { code: 'INTERNAL_ERROR', message: 'internal error' }, 'a bug stays on the holder\'s side');
  await t.resolveMatch(pool.query('SELECT count(*)::integer AS n FROM skilld.requests'), { rows: [{ n: 0 }] }, 'answered requests are deleted by their sender');
});

t.test('a holder that is not running: refused at once, nothing kept', { skip }, async (t) => {
  const { url, pool } = await database(t);
  const a = await host(t, url, pool, 'host-a');
  const b = await host(t, url, pool, 'host-b');
  await a.lease.leave();
  const refused = await rejection(b.mailbox.send('host-a', 'job-1', 'jobs/cancel', { job_id: 'job-1' }));
  t.match(refused, { code: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-a', in_doubt: false }, message: /nothing of it was kept/ });
  t.same(await requestStates(pool), [], 'no request was left');
});

t.test('a holder that does not take a request within a lease: withdrawn, and never carried out later', { skip }, async (t) => {
  const { url, pool } = await database(t);
  const a = await host(t, url, pool, 'host-a');
  const b = await host(t, url, pool, 'host-b');
  const sent = b.mailbox.send('host-a', 'job-1', 'jobs/reply', { job_id: 'job-1', interaction_id: 1, response: 'late' });
  await waitFor(async () => (await requestStates(pool)).length === 1);
  // A lease later: the request is older than a lease, and A (not carrying out requests yet) has not taken it.
  await pool.query(`UPDATE skilld.requests SET created_at = now() - interval '1 minute'`);
  const withdrawn = await lookedAfter(b, rejection(sent));
  t.match(withdrawn, { code: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-a', in_doubt: false } });
  const carried: unknown[] = [];
  a.mailbox.start(async (method, params) => carried.push([method, params]));
  await a.mailbox.drain();
  t.same(carried, [], 'the holder never carries out a withdrawn request');
});

t.test('a holder that goes away while it carries a request out: in doubt, said so; a read is not', { skip }, async (t) => {
  const { url, pool } = await database(t);
  const [a, b, c] = [await host(t, url, pool, 'host-a'), await host(t, url, pool, 'host-b'), await host(t, url, pool, 'host-c')];
  const doubt = await goneWhileCarrying(pool, b, a, 'jobs/cancel', 'job-1');
  t.match(doubt, { code: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-a', in_doubt: true }, message: /may or may not have taken effect/ });
  // A read of the logs changes nothing: never in doubt.
  const read = await goneWhileCarrying(pool, b, c, 'jobs/logs', 'job-2');
  t.match(read, { code: 'JOB_OWNER_UNREACHABLE', details: { host_id: 'host-c', in_doubt: false }, message: /where job job-2 ran and its logs are/ });
});

/** `sender` leaves `method` for `holder`, which takes it and never answers; then the holder's lease lapses. What the sender is answered. */
async function goneWhileCarrying(pool: Pool, sender: Host, holder: Host, method: RoutedMethod, jobId: string): Promise<SkilldError> {
  let taken: () => void = () => undefined;
  const carrying = new Promise<void>((resolve) => (taken = resolve));
  holder.mailbox.start(() => {
    taken();
    return new Promise(() => undefined);
  });
  const sent = sender.mailbox.send(holder.id, jobId, method, { job_id: jobId });
  await carrying;
  await pool.query(`UPDATE skilld.hosts SET lease_until = now() - interval '1 second' WHERE host_id = $1`, [holder.id]);
  return lookedAfter(sender, rejection(sent));
}

/** What `settled` resolves to, once the sender looked at its requests as its timer would (repeatedly: the request may not be its yet). */
async function lookedAfter<T>(sender: Host, settled: Promise<T>): Promise<T> {
  let done = false;
  void settled.finally(() => (done = true));
  for (let i = 0; i < 500 && !done; i += 1) {
    sender.mailbox.caughtUp();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return settled;
}

/** Polls a condition of the database, bounded. */
/** Waits for `condition`; gives up after a minute (a hang, not a busy machine). */
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
