// The throwaway PostgreSQL the store's tests run on: databases apart, a crash and a restart that
// a pool rides out by itself, and a stop that leaves neither a server nor a folder behind.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { isDatabaseFault } from '../../daemon/store/pg/db-faults.js';
import { exited, processRunning, startThrowawayPostgres, type ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

/** A pool whose idle clients are dropped quietly when the server goes away (an unhandled `error` would end the process). */
function pool(t: Test, url: string): pg.Pool {
  const created = new pg.Pool({ connectionString: url, max: 2 });
  created.on('error', () => undefined);
  t.teardown(() => (created.ended ? undefined : created.end()));
  return created;
}

async function postmasterPid(dir: string): Promise<number> {
  return Number((await readFile(join(dir, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

const started = await startThrowawayPostgres();
const skip = typeof started === 'string' ? started : false;

t.test('a cluster of its own: two databases, a crash a pool rides out after restart, a stop that leaves nothing behind', { skip }, async (t) => {
  const postgres = started as ThrowawayPostgres;
  t.teardown(() => postgres.stop());

  const first = await postgres.createDatabase();
  const second = await postgres.createDatabase('other');
  t.not(first, second, 'each caller gets a database of its own');
  const a = pool(t, first);
  const b = pool(t, second);
  await a.query('CREATE TABLE only_here (n int)');
  await a.query('INSERT INTO only_here VALUES (1)');
  t.same((await a.query('SELECT current_database() AS db')).rows, [{ db: new URL(first).pathname.slice(1) }]);
  t.same((await b.query('SELECT current_database() AS db')).rows, [{ db: new URL(second).pathname.slice(1) }]);
  await t.rejects(b.query('SELECT * FROM only_here'), { code: '42P01' }, 'the databases are apart');

  await postgres.crash();
  const failure = await a.query('SELECT 1').then(() => null, (error: unknown) => error);
  t.ok(failure instanceof Error, 'a query fails while the server is down');
  t.ok(isDatabaseFault(failure), `a database fault: ${(failure as Error).message}`);

  await postgres.restart();
  t.same((await a.query('SELECT 2 AS n')).rows, [{ n: 2 }], 'the same pool works again by itself');
  t.same((await a.query('SELECT n FROM only_here')).rows, [{ n: 1 }], 'what was committed before the crash is still there');

  const pid = await postmasterPid(postgres.dir);
  t.ok(processRunning(pid), 'the postmaster runs');
  await a.end();
  await b.end();
  await postgres.stop();
  t.notOk(processRunning(pid), 'stop: the postmaster is gone');
  t.notOk(existsSync(postgres.dir), 'stop: the folder is gone');
  await postgres.stop();
  t.pass('stop a second time does nothing');
});

t.test('stop after a crash removes the folder; a bad database prefix is refused', { skip }, async (t) => {
  const postgres = (await startThrowawayPostgres()) as ThrowawayPostgres;
  t.teardown(() => postgres.stop());
  await t.rejects(postgres.createDatabase('Robert"; DROP'), /database prefix/);
  const pid = await postmasterPid(postgres.dir);
  await postgres.crash();
  t.notOk(processRunning(pid), 'crash: the postmaster is gone');
  await postgres.stop();
  t.notOk(existsSync(postgres.dir), 'the folder is gone');
});

/** The built harness (tests of a process that dies run it in a child: `npm run build` first). */
const BUILT = resolve(import.meta.dirname, '..', '..', 'dist', 'test', 'fixtures', 'throwaway-postgres.js');
const CHILD = `
  const { readFileSync } = await import('node:fs');
  const { startThrowawayPostgres } = await import(process.argv[1]);
  const postgres = await startThrowawayPostgres();
  const pid = Number(readFileSync(postgres.dir + '/data/postmaster.pid', 'utf8').split('\\n')[0]);
  process.stdout.write(JSON.stringify({ dir: postgres.dir, pid }) + '\\n');
  if (process.argv[2] === 'hang') setInterval(() => {}, 60_000);
`;

/** Starts a process that starts a cluster and never stops it; resolves with the cluster's folder and postmaster. */
async function abandoningChild(mode: 'exit' | 'hang') {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, BUILT, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exit = once(child, 'exit');
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { child, exit, ...(JSON.parse(line) as { dir: string; pid: number }) };
}

/** Resolves once `dir` no longer exists (its removal empties it first: each deletion is an event). */
async function removed(dir: string): Promise<void> {
  const watcher = watch(dir);
  watcher.on('error', () => undefined);
  try {
    while (existsSync(dir)) await Promise.race([once(watcher, 'change'), once(watcher, 'close')]);
  } finally {
    watcher.close();
  }
}

t.test('a process that exits without stop() leaves no server behind: the exit hook stops it', { skip }, async (t) => {
  const { exit, dir, pid } = await abandoningChild('exit');
  await exit;
  t.ok(await exited(pid), 'the postmaster is gone');
  t.notOk(existsSync(dir), 'the folder is gone');
});

t.test('a process killed by a signal leaves no server behind: its watchdog stops it', { skip }, async (t) => {
  const { child, exit, dir, pid } = await abandoningChild('hang');
  t.ok(processRunning(pid), 'the postmaster runs');
  const gone = removed(dir);
  child.kill('SIGKILL');
  await exit;
  await gone;
  t.ok(await exited(pid), 'the postmaster is gone');
});
