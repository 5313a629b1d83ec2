import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isWithin, listTree, openWithin, placeOf } from '../../rpc/within-folder.js';

const temp = await realpath(await mkdtemp(join(tmpdir(), 'skilld-within-')));
t.teardown(() => rm(temp, { recursive: true, force: true }));
const outside = join(temp, 'outside');
await mkdir(outside);
await writeFile(join(outside, 'secret.txt'), 'SECRET\n');
const root = join(temp, 'folder');
await mkdir(join(root, 'sub'), { recursive: true });
await writeFile(join(root, 'file.txt'), 'inside\n');
await symlink('file.txt', join(root, 'alias.txt'));
await symlink(join('..', 'file.txt'), join(root, 'sub', 'inner.txt'));
await symlink(join(outside, 'secret.txt'), join(root, 'leak.txt'));
await symlink(outside, join(root, 'out'));
await symlink('..', join(root, 'sub', 'up'));
await symlink('missing.txt', join(root, 'dangling'));

/** The bytes `openWithin` reads, or why it refused. */
async function read(path: string): Promise<string> {
  const opened = await openWithin(root, path);
  if ('refused' in opened) return `refused: ${opened.refused}`;
  try {
    return (await opened.file.readFile()).toString('utf8');
  } finally {
    await opened.file.close();
  }
}

t.test('a path is within a folder when it is the folder or below it, not when it only shares the start of its name', async (t) => {
  t.ok(isWithin('/a/b', '/a/b'));
  t.ok(isWithin('/a/b', '/a/b/c/d'));
  t.notOk(isWithin('/a/b', '/a/bc'));
  t.notOk(isWithin('/a/b', '/a'));
  t.ok(isWithin('/', '/etc'), 'the root folder holds everything');
});

t.test('where a path leads: links are resolved to the end, and a dangling one leads nowhere', async (t) => {
  t.equal(await placeOf(root, join(root, 'file.txt')), 'inside');
  t.equal(await placeOf(root, join(root, 'alias.txt')), 'inside');
  t.equal(await placeOf(root, join(root, 'sub', 'up')), 'inside', 'a link to the folder itself');
  t.equal(await placeOf(root, join(root, 'leak.txt')), 'outside');
  t.equal(await placeOf(root, join(root, 'out')), 'outside');
  t.equal(await placeOf(root, join(root, 'out', 'secret.txt')), 'outside', 'a path through a folder link');
  t.equal(await placeOf(root, join(root, 'dangling')), 'nowhere');
});

t.test('a tree is listed without entering links to folders, so a link to the folder above lists nothing twice', async (t) => {
  t.same(await listTree(root), ['alias.txt', 'dangling', 'file.txt', 'leak.txt', 'out', 'sub', join('sub', 'inner.txt'), join('sub', 'up')]);
  t.same(await listTree(join(temp, 'none')), [], 'a folder that is not there has no entries');
});

t.test('a file inside is read; a link that stays inside is read as the file it names', async (t) => {
  t.equal(await read(join(root, 'file.txt')), 'inside\n');
  t.equal(await read(join(root, 'alias.txt')), 'inside\n');
  t.equal(await read(join(root, 'sub', 'inner.txt')), 'inside\n');
});

t.test('nothing outside the folder is read: a link to a file, a path through a link to a folder', async (t) => {
  t.equal(await read(join(root, 'leak.txt')), 'refused: outside');
  t.equal(await read(join(root, 'out', 'secret.txt')), 'refused: outside');
  t.equal(await read(join(root, 'out')), 'refused: outside', 'a link to a folder outside is outside before it is a folder');
});

t.test('folders and FIFOs are not files; a FIFO is refused without waiting for a writer', async (t) => {
  execFileSync('mkfifo', [join(root, 'pipe')]);
  t.teardown(() => rm(join(root, 'pipe')));
  t.equal(await read(join(root, 'pipe')), 'refused: not_a_file');
  t.equal(await read(join(root, 'sub')), 'refused: not_a_file');
});

t.test('a dangling link and a missing file lead nowhere', async (t) => {
  t.equal(await read(join(root, 'dangling')), 'refused: nowhere');
  t.equal(await read(join(root, 'missing.txt')), 'refused: nowhere');
});

t.test('a file this user may not read is an error with its reason, not a file that is absent', { skip: process.getuid?.() === 0 ? 'root reads every file' : false }, async (t) => {
  const locked = join(root, 'locked.txt');
  await writeFile(locked, 'locked\n');
  await chmod(locked, 0o000);
  t.teardown(() => rm(locked));
  await t.rejects(openWithin(root, locked), { code: 'EACCES' });
});
