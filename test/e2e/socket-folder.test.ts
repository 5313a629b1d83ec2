// The socket's folder must be the daemon user's own: whoever can write there can replace the socket.
import t from 'tap';
import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestDaemon } from '../helpers/daemon.js';

const root = await mkdtemp(join(tmpdir(), 'skilld-sockdir-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

async function refusal(folder: string, name: string): Promise<string> {
  const dir = await mkdtemp(join(root, `${name}-`));
  return TestDaemon.start({ dir, socket: join(folder, 'skilld.sock') }).then(
    async (daemon) => {
      await daemon.stop();
      return 'started';
    },
    (error: Error) => error.message,
  );
}

t.test('a socket folder writable by everyone (a /tmp/skilld-<uid> made by someone else) is refused with a clear message', async (t) => {
  const folder = join(root, 'open');
  await mkdir(folder);
  await chmod(folder, 0o777);
  const message = await refusal(folder, 'open');
  t.match(message, /refusing to listen in .*open: it is writable by everyone \(mode 0777\)/);
  t.match(message, /another user could replace the socket/);
  t.notOk(existsSync(join(folder, 'skilld.sock')), 'no socket was created there');
});

t.test('a socket folder writable by its group is refused too', async (t) => {
  const folder = join(root, 'group');
  await mkdir(folder);
  await chmod(folder, 0o770);
  t.match(await refusal(folder, 'group'), /writable by its group \(mode 0770\)/);
});

t.test('a socket folder owned by another user is refused', { skip: process.getuid?.() === 0 ? false : 'needs root to give a folder to another user' }, async (t) => {
  const folder = join(root, 'theirs');
  await mkdir(folder, { mode: 0o700 });
  await chown(folder, 65534, 65534);
  t.match(await refusal(folder, 'theirs'), /owned by uid 65534/);
});

t.test('a symbolic link in place of the socket folder is refused', async (t) => {
  const real = join(root, 'real');
  await mkdir(real, { mode: 0o700 });
  await symlink(real, join(root, 'link'));
  t.match(await refusal(join(root, 'link'), 'link'), /not a folder/);
});

t.test('a missing socket folder is created 0700, and the daemon serves there', async (t) => {
  const folder = join(root, 'fresh', 'skilld');
  const dir = await mkdtemp(join(root, 'fresh-state-'));
  const daemon = await TestDaemon.start({ dir, socket: join(folder, 'skilld.sock') });
  t.teardown(() => daemon.stop());
  t.equal((await lstat(folder)).mode & 0o777, 0o700);
  t.match(await (await daemon.client()).request('daemon/ping'), { ok: true });
});

t.test('a socket folder of our own inside a folder another user owns with mode 0777 is refused, naming that folder: its owner could rename ours and put another in its place', { skip: process.getuid?.() === 0 ? false : 'needs root to give a folder to another user' }, async (t) => {
  const theirs = join(root, 'their-open');
  await mkdir(theirs);
  await chmod(theirs, 0o777);
  await chown(theirs, 54321, 54321);
  const folder = join(theirs, 'skilld');
  await mkdir(folder, { mode: 0o700 });
  const message = await refusal(folder, 'nested');
  t.match(message, `refusing to listen in ${folder}: ${theirs}, a folder above it, is owned by uid 54321`);
  t.notOk(existsSync(join(folder, 'skilld.sock')), 'no socket was created there');
});

/** Starts a daemon whose state folder is `<dir>/state`, made beforehand with `mode`; resolves with why it refused. */
async function stateRefusal(dir: string, mode: number, uid = 0): Promise<string> {
  const state = join(dir, 'state');
  await mkdir(state, { recursive: true });
  await chmod(state, mode);
  if (uid !== 0) await chown(state, uid, uid);
  return TestDaemon.start({ dir, socket: join(await mkdtemp(join(root, 'sock-')), 'skilld.sock') }).then(
    async (daemon) => {
      await daemon.stop();
      return 'started';
    },
    (error: Error) => error.message,
  );
}

t.test('a state folder writable by everyone is refused before anything is read from it: its process records name the processes the daemon kills at start', async (t) => {
  const dir = await mkdtemp(join(root, 'state-open-'));
  const message = await stateRefusal(dir, 0o777);
  t.match(message, `refusing to keep state in ${join(dir, 'state')}: it is writable by everyone (mode 0777); another user could plant records of processes for the daemon to kill at its next start`);
  t.notOk(existsSync(join(dir, 'state', 'runs')), 'nothing was made in it');
});

t.test('a state folder owned by another user is refused', { skip: process.getuid?.() === 0 ? false : 'needs root to give a folder to another user' }, async (t) => {
  const dir = await mkdtemp(join(root, 'state-theirs-'));
  t.match(await stateRefusal(dir, 0o700, 54321), /refusing to keep state in .*: it is owned by uid 54321/);
});

t.test('a state folder of our own inside a world-writable folder that is not sticky is refused, naming that folder', async (t) => {
  const dir = await mkdtemp(join(root, 'state-above-'));
  await chmod(dir, 0o777);
  t.match(await stateRefusal(dir, 0o700), `refusing to keep state in ${join(dir, 'state')}: ${dir}, a folder above it, is writable by everyone (mode 0777) and not sticky`);
});
