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
