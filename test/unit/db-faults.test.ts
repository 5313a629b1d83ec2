// Which errors of the PostgreSQL client mean the database is unreachable (a retry can succeed once
// it is back) and which are bugs, and what the daemon's storage entry point makes of them.
import t, { type Test } from 'tap';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SkilldError } from '../../rpc/errors.js';
import { databaseFaultDetail, isDatabaseFault } from '../../daemon/store/pg/db-faults.js';
import { asStorageError, isStorageFault } from '../../daemon/store/storage-fault.js';
import { createLogger } from '../../daemon/base/logger.js';
import { inTransaction, openPool, type Pool, type PoolClient } from '../../daemon/store/pg/pool.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

/** The error `promise` rejects with; fails the test when it resolves. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => { throw new Error('expected a failure'); },
    (error: unknown) => error as Error,
  );
}

/** A pg Client that reports its errors through its calls only (an unhandled `error` event would end the process). */
function client(url: string): pg.Client {
  const created = new pg.Client({ connectionString: url });
  created.on('error', () => undefined);
  return created;
}

const coded = (code: string, message = 'x', extra: object = {}): Error => Object.assign(new Error(message), { code, ...extra });

/** Faults the harness cannot bring about on demand, built in the shape the driver gives them. */
const CONSTRUCTED_FAULTS: [string, unknown, string][] = [
  ['57P02 crash shutdown', coded('57P02', 'terminating connection because of crash of another server process'), '57P02'],
  ['57P03 starting up', coded('57P03', 'the database system is starting up'), '57P03'],
  ['57P03 not yet accepting connections', coded('57P03', 'the database system is not yet accepting connections'), '57P03'],
  ['57P05 idle session timeout', coded('57P05', 'terminating connection due to idle-session timeout'), '57P05'],
  ['53300 too many connections', coded('53300', 'sorry, too many clients already'), '53300'],
  ['53100 disk full', coded('53100', 'could not extend file "base/16384/16385": No space left on device'), '53100'],
  ['58030 I/O error', coded('58030', 'could not write to file "pg_wal/xlogtemp.123": Input/output error'), '58030'],
  ['08006 connection failure', coded('08006', 'connection failure'), '08006'],
  ['08001 cannot establish', coded('08001', 'could not connect'), '08001'],
  ['ECONNRESET', coded('ECONNRESET', 'read ECONNRESET', { syscall: 'read' }), 'ECONNRESET'],
  ['ETIMEDOUT', coded('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.1:5432', { syscall: 'connect' }), 'ETIMEDOUT'],
  ['EPIPE', coded('EPIPE', 'write EPIPE', { syscall: 'write' }), 'EPIPE'],
  ['EAI_AGAIN', coded('EAI_AGAIN', 'getaddrinfo EAI_AGAIN db', { syscall: 'getaddrinfo' }), 'EAI_AGAIN'],
  ['a connect timeout', new Error('timeout expired'), 'timeout expired'],
  ['a pool connect timeout with its cause', new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') }), 'Connection terminated due to connection timeout'],
  ['ECONNREFUSED on every address of a host', Object.assign(new AggregateError([coded('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432'), coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')], ''), { code: 'ECONNREFUSED' }), 'ECONNREFUSED'],
  ['an AggregateError without a code', new AggregateError([new Error('boom'), coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')], ''), 'ECONNREFUSED'],
  ['a fault wrapped as a cause', new Error('query failed', { cause: coded('57P01', 'terminating connection due to administrator command') }), '57P01'],
];

const cyclic = new Error('cycle') as Error & { cause?: unknown };
cyclic.cause = cyclic;

/** Errors that are no fault of the database being away: a retry would fail the same way, or they are bugs. */
const CONSTRUCTED_OTHERS: [string, unknown][] = [
  ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'rows')")],
  ['57P04 database dropped', coded('57P04', 'database "x" does not exist')],
  ['53200 out of memory', coded('53200', 'out of memory')],
  ['40001 serialization failure', coded('40001', 'could not serialize access due to concurrent update')],
  ['a client this process ended', new Error('Connection terminated')],
  ['a client this process closed', new Error('Client was closed and is not queryable')],
  ['ENOENT of a file', coded('ENOENT', "ENOENT: no such file or directory, open '/x'", { syscall: 'open' })],
  ['a numeric code', { code: 57, message: 'x' }],
  ['a string', 'ECONNRESET'],
  ['null', null],
  ['undefined', undefined],
  ['a cause that is itself', cyclic],
  ['a fault buried too deep', [1, 2, 3, 4, 5].reduce<unknown>((inner) => new Error('wrapped', { cause: inner }), coded('57P01'))],
];

/** Checks one error through both the classifier and the daemon's storage entry point. */
function expectFault(t: Test, label: string, error: unknown, detail: string): void {
  t.ok(isDatabaseFault(error), `${label}: a database fault`);
  t.equal(databaseFaultDetail(error), detail, `${label}: named by ${detail}`);
  t.ok(isStorageFault(error), `${label}: a storage fault`);
  const wrapped = asStorageError(error, 'the new job');
  t.ok(wrapped instanceof SkilldError && wrapped.code === 'STORAGE_UNAVAILABLE', `${label}: STORAGE_UNAVAILABLE`);
  t.equal((wrapped as Error).message, `could not write the new job: the database is unreachable or could not take it now (${detail}); nothing of this request was kept, and a retry can succeed`);
  t.equal((wrapped as Error).cause, error, `${label}: the cause is kept`);
}

function expectOther(t: Test, label: string, error: unknown): void {
  t.notOk(isDatabaseFault(error), `${label}: no database fault`);
  t.notOk(isStorageFault(error), `${label}: no storage fault`);
  t.equal(asStorageError(error, 'the new job'), error, `${label}: stays itself`);
}

t.test('faults built in the driver\'s shapes are database faults; STORAGE_UNAVAILABLE names them', async (t) => {
  for (const [label, error, detail] of CONSTRUCTED_FAULTS) expectFault(t, label, error, detail);
});

t.test('bugs and lasting failures are not', async (t) => {
  for (const [label, error] of CONSTRUCTED_OTHERS) expectOther(t, label, error);
});

t.test('the file system\'s faults keep their message; a SkilldError passes through', async (t) => {
  const full = coded('ENOSPC', 'ENOSPC: no space left on device, write');
  t.ok(isStorageFault(full));
  t.equal((asStorageError(full, 'the reply') as Error).message, 'could not write the reply (ENOSPC); nothing of this request was kept, and a retry can succeed once the storage recovers');
  const ours = new SkilldError('JOB_NOT_FOUND', 'no job');
  t.equal(asStorageError(ours, 'the reply'), ours);
  t.notOk(isStorageFault(ours));
});

t.test('real errors without a server: a socket folder with no server (ENOENT), a closed port (ECONNREFUSED), a missing file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-nopg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const noSocket = await failure(client(`postgres://skilld@${encodeURIComponent(dir)}/db`).connect());
  t.match(noSocket, { code: 'ENOENT', syscall: 'connect' });
  expectFault(t, 'no socket', noSocket, 'ENOENT');

  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  const refused = await failure(client(`postgres://skilld@127.0.0.1:${port}/db`).connect());
  expectFault(t, 'closed port', refused, 'ECONNREFUSED');

  const missing = await failure(open(join(dir, 'nothing-here')));
  expectOther(t, 'a missing file', missing);
});

const started = await startThrowawayPostgres();
const skip = typeof started === 'string' ? started : false;

t.test('a session frozen in a transaction: the server ends it (25P03) and frees its locks; a lock held by a busy session is waited for a bounded time (55P03)', { skip }, async (t) => {
  const postgres = started as ThrowawayPostgres;
  const url = await postgres.createDatabase('frozen');
  const pool = openPool(url, createLogger('silent'), 300);
  t.teardown(() => pool.end());
  await pool.query('CREATE TABLE row_lock (id int PRIMARY KEY, n int)');
  await pool.query('INSERT INTO row_lock VALUES (1, 0)');

  // The frozen host: it took a row lock in a transaction, then sent nothing more until it woke.
  const frozen = holdLock(pool, async () => undefined);
  await frozen.holdsLock;
  // lock_timeout and the idle limit are the same span: on a busy machine the write may give up
  // (55P03, retryable) just before the server ends the frozen transaction; it is tried again, as
  // the daemon tries its own work again.
  for (let tries = 1; ; tries += 1) {
    const failed = await pool.query('UPDATE row_lock SET n = n + 10 WHERE id = 1').then(() => null, (error: unknown) => error);
    if (failed === null) break;
    if ((failed as { code?: string }).code !== '55P03' || tries === 10) throw failed;
  }
  await frozen.serverEnded;
  const frozenEnd = failure(frozen.done);
  frozen.wake();
  expectFault(t, 'the frozen transaction, once it wakes', await frozenEnd, 'Client has encountered a connection error and is not queryable');
  t.match(await pool.query('SELECT n FROM row_lock'), { rows: [{ n: 10 }] }, 'the waiting write went through once the server ended the frozen transaction, of which nothing counted');
  t.equal(pool.totalCount, pool.idleCount, 'the broken connection was not given back to the pool');

  // A session that holds the lock and stays busy: the waiting write gives up with a retryable fault.
  const busy = holdLock(pool, (client) => client.query('SELECT pg_sleep(600)'));
  await busy.holdsLock;
  expectFault(t, 'a row lock held past lock_timeout', await failure(pool.query('UPDATE row_lock SET n = n + 10 WHERE id = 1')), '55P03');
  const busyEnd = failure(busy.done);
  await pool.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'");
  t.match(await busyEnd, { code: '57014' }, 'the busy one, canceled');
  t.match(await pool.query('SELECT n FROM row_lock'), { rows: [{ n: 10 }] });
});

/** A transaction that locks the row, then does `then` (nothing: it sits idle; a long query: it is busy) until woken. */
function holdLock(pool: Pool, then: (client: PoolClient) => Promise<unknown>): { holdsLock: Promise<void>; serverEnded: Promise<void>; wake(): void; done: Promise<void> } {
  let wake: () => void = () => undefined;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  let ended: () => void = () => undefined;
  const serverEnded = new Promise<void>((resolve) => (ended = resolve));
  let locked: () => void = () => undefined;
  const holdsLock = new Promise<void>((resolve) => (locked = resolve));
  const done = inTransaction(pool, async (client) => {
    client.once('error', () => ended());
    await client.query('UPDATE row_lock SET n = n + 1 WHERE id = 1');
    locked();
    await then(client);
    await woken;
    await client.query('UPDATE row_lock SET n = n + 100 WHERE id = 1');
  });
  return { holdsLock, serverEnded, wake, done };
}

t.test('real errors from a server: terminated backend, broken client, lost in-flight query, pool timeout, syntax, unique violation', { skip }, async (t) => {
  const postgres = started as ThrowawayPostgres;
  t.teardown(() => postgres.stop());
  const url = await postgres.createDatabase('faults');
  const admin = client(url);
  await admin.connect();
  t.teardown(() => admin.end());
  const victim = client(url);
  await victim.connect();
  t.teardown(() => victim.end());

  const { rows } = await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const sleeping = failure(victim.query('SELECT pg_sleep(600)'));
  // Not events.once: it rejects on the `error` the client emits before `end`.
  const ended = new Promise((resolve) => victim.once('end', resolve));
  await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
  expectFault(t, 'terminated backend', await sleeping, '57P01');
  await ended;
  expectFault(t, 'a client used after its connection broke', await failure(victim.query('SELECT 1')), 'Client has encountered a connection error and is not queryable');

  await admin.query('CREATE TABLE once (id int PRIMARY KEY)');
  await admin.query('INSERT INTO once VALUES (1)');
  const unique = await failure(admin.query('INSERT INTO once VALUES (1)'));
  t.match(unique, { code: '23505' });
  expectOther(t, 'unique violation', unique);
  const syntax = await failure(admin.query('SELEC 1'));
  t.match(syntax, { code: '42601' });
  expectOther(t, 'syntax error', syntax);

  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 50 });
  pool.on('error', () => undefined);
  t.teardown(() => pool.end());
  const held = await pool.connect();
  expectFault(t, 'a pool with no free connection in time', await failure(pool.connect()), 'timeout exceeded when trying to connect');
  held.release();

  const inFlight = failure(admin.query('SELECT pg_sleep(600)'));
  await postgres.crash();
  expectFault(t, 'a query in flight when the server crashed', await inFlight, 'Connection terminated unexpectedly');
});
