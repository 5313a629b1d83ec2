// The state folder's lock (daemon/state-lock.ts): one daemon per state folder, held by the
// kernel through libc's flock for as long as the descriptor is open, never through a link.
import t, { type Test } from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { link, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFlock, StateDirLockedError, STATE_LOCK_FILE, takeStateLock, type Flock } from '../../daemon/state-lock.js';

const holder = { pid: 4242, socket: '/run/skilld/skilld.sock' };

async function folder(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-lock-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The error `promise` is rejected with (the test fails if it resolves). */
async function refusal(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('the lock was taken; a refusal was expected');
}

t.test('the lock is taken once: the holder is written, a second taker is refused naming it, and takes it once it is released', async (t) => {
  const dir = await folder(t);
  const first = await takeStateLock(dir, holder);
  t.same(first.view, { path: join(dir, STATE_LOCK_FILE), held: true, reason: null });
  t.equal(first.recordProblem, null);
  t.same(JSON.parse(await readFile(join(dir, STATE_LOCK_FILE), 'utf8')), holder, 'pid and socket written');
  t.equal((await stat(join(dir, STATE_LOCK_FILE))).mode & 0o777, 0o600, 'made 0600');

  const refused = await refusal(takeStateLock(dir, { pid: 1, socket: '/elsewhere.sock' }));
  t.ok(refused instanceof StateDirLockedError);
  t.match(refused, { code: 'STATE_DIR_LOCKED', holder, message: `the state folder ${dir} is in use by another skilld (pid 4242, socket /run/skilld/skilld.sock); one daemon per state folder` });
  t.same(JSON.parse(await readFile(join(dir, STATE_LOCK_FILE), 'utf8')), holder, 'the refused taker wrote nothing');

  first.release();
  first.release();
  const next = await takeStateLock(dir, { pid: 7, socket: '/next.sock' });
  t.teardown(() => next.release());
  t.equal(next.view.held, true, 'released: the next one takes it');
  t.equal(await readFile(join(dir, STATE_LOCK_FILE), 'utf8'), '{"pid":7,"socket":"/next.sock"}\n', 'its record replaces the one before, whole');
});

t.test('a holder that has not written its record yet is named as such', async (t) => {
  const dir = await folder(t);
  const fd = openSync(join(dir, STATE_LOCK_FILE), 'w', 0o600);
  t.teardown(() => closeSync(fd));
  t.equal((await loadFlock()).call(fd, 2 | 4), 0, 'locked by another descriptor');
  t.match(await refusal(takeStateLock(dir, holder)), { holder: null, message: /in use by another skilld \(its pid and socket are not written yet\)/ });
});

t.test('a child process does not hold the lock: the descriptor is closed on exec', async (t) => {
  const dir = await folder(t);
  const lock = await takeStateLock(dir, holder);
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  await once(child, 'spawn');
  lock.release();
  const next = await takeStateLock(dir, holder);
  t.equal(next.view.held, true, 'taken while the child lives on');
  next.release();
});

t.test('a symbolic link in the lock file\'s place is refused and never followed', async (t) => {
  const dir = await folder(t);
  const target = join(dir, 'elsewhere');
  await writeFile(target, 'kept as it is');
  await symlink(target, join(dir, STATE_LOCK_FILE));
  t.match(await refusal(takeStateLock(dir, holder)), { message: `the state folder's lock file ${join(dir, STATE_LOCK_FILE)} is a symbolic link; it is never followed: remove it` });
  t.equal(await readFile(target, 'utf8'), 'kept as it is', 'the file it leads to is untouched');

  const dangling = await folder(t);
  const missing = join(dangling, 'missing');
  await symlink(missing, join(dangling, STATE_LOCK_FILE));
  t.match(await refusal(takeStateLock(dangling, holder)), { message: /is a symbolic link; it is never followed/ });
  await t.rejects(stat(missing), { code: 'ENOENT' }, 'a link to nothing makes nothing');
});

t.test('a lock file with a second name, or that is not a plain file, is refused: its rewrite would reach elsewhere', async (t) => {
  const dir = await folder(t);
  const other = join(dir, 'other-name');
  await writeFile(other, 'kept as it is');
  await link(other, join(dir, STATE_LOCK_FILE));
  t.match(await refusal(takeStateLock(dir, holder)), { message: /lock file .* it has 2 names \(hard links\); remove it/ });
  t.equal(await readFile(other, 'utf8'), 'kept as it is');

  const fifo = await folder(t);
  execFileSync('mkfifo', [join(fifo, STATE_LOCK_FILE)]);
  t.match(await refusal(takeStateLock(fifo, holder)), { message: /lock file .* it is not a plain file; remove it/ }, 'a FIFO: refused, and the start is not held up');
});

t.test('where flock cannot be called, the lock is not held and the view says why; start-up goes on', async (t) => {
  const dir = await folder(t);
  const missing = (): Promise<Flock> => Promise.reject(new Error('libc.so.6: cannot open shared object file'));
  const lock = await takeStateLock(dir, holder, missing);
  t.same(lock.view, { path: join(dir, STATE_LOCK_FILE), held: false, reason: 'flock cannot be called here: libc.so.6: cannot open shared object file' });
  const again = await takeStateLock(dir, holder, missing);
  t.equal(again.view.held, false, 'a second one is not refused: nothing can tell');
  t.equal(await readFile(join(dir, STATE_LOCK_FILE), 'utf8'), '', 'no record: it would tell of a lock nobody holds');
});

t.test('flock: interrupted by a signal, it is called again; any other failure leaves the lock not held, named', async (t) => {
  const dir = await folder(t);
  const { errno } = await loadFlock();
  const answers = [errno['EINTR'] ?? -1, 0];
  const interrupted = await takeStateLock(dir, holder, () => Promise.resolve({ errno, call: () => answers.shift() ?? -1 }));
  t.equal(interrupted.view.held, true);
  t.same(answers, [], 'called twice');
  interrupted.release();
  const noLocks = await takeStateLock(dir, holder, () => Promise.resolve({ errno, call: () => errno['ENOLCK'] ?? -1 }));
  t.same(noLocks.view, { path: join(dir, STATE_LOCK_FILE), held: false, reason: 'flock failed: ENOLCK' });
});
