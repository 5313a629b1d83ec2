// The token `skillctl web --port N` keeps (docs/web.md, "The kept token"): made once, read again
// at each start, made anew on request; never read through a link, nor from a file another user
// owns or may read. "Another user" is a uid that owns no account, given files with chown (the
// tests run as root; elsewhere those skip).
import t from 'tap';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keptToken, tokenFolder, tokenPath } from '../../clients/web/token-file.js';

const OTHER_UID = 54321;
const asRoot = process.getuid?.() === 0 ? false : 'needs root to give a file to another user';
const base = await mkdtemp(join(tmpdir(), 'skilld-test-token-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

let n = 0;
/** A state folder of its own for each test: `<new>/skilld`, not made yet. */
const fresh = async (): Promise<string> => join(await mkdtemp(join(base, `state-${(n += 1)}-`)), 'skilld');

t.test('the folder: $XDG_STATE_HOME/skilld when it is absolute, else ~/.local/state/skilld; one file per port', async (t) => {
  t.equal(tokenFolder({ XDG_STATE_HOME: '/var/state' }, '/home/a'), '/var/state/skilld');
  t.equal(tokenFolder({ XDG_STATE_HOME: 'relative' }, '/home/a'), '/home/a/.local/state/skilld', 'a relative one is ignored, as the XDG spec says');
  t.equal(tokenFolder({}, '/home/a'), '/home/a/.local/state/skilld');
  t.equal(tokenPath(8421, '/home/a/.local/state/skilld'), '/home/a/.local/state/skilld/web-8421.token');
});

t.test('made once, in a folder of 0700 and a file of 0600, then read again; --new-token makes another', async (t) => {
  const folder = await fresh();
  const first = await keptToken(8421, { folder });
  t.match(first, { made: 'new', path: join(folder, 'web-8421.token'), token: /^[A-Za-z0-9_-]{32}$/ });
  t.equal((await stat(folder)).mode & 0o777, 0o700);
  t.equal((await stat(first.path)).mode & 0o777, 0o600);
  t.equal(await readFile(first.path, 'utf8'), `${first.token}\n`);
  t.same(await keptToken(8421, { folder }), { ...first, made: 'kept' }, 'the same token at the next start');
  const other = await keptToken(8422, { folder });
  t.not(other.token, first.token, 'another port, another page: a token of its own');
  const renewed = await keptToken(8421, { folder, renew: true });
  t.equal(renewed.made, 'new');
  t.not(renewed.token, first.token);
  t.equal((await keptToken(8421, { folder })).token, renewed.token, 'the new one is kept');
  t.same((await readdir(folder)).sort(), ['web-8421.token', 'web-8422.token'], 'no temp file left behind');
});

t.test('a file of ours that holds no token is replaced, and said so', async (t) => {
  const folder = await fresh();
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const path = tokenPath(8421, folder);
  for (const text of ['', 'short\n', `${'a'.repeat(32)}\nmore\n`, `${'a'.repeat(31)}!\n`]) {
    await writeFile(path, text, { mode: 0o600 });
    const kept = await keptToken(8421, { folder });
    t.equal(kept.made, 'replaced', JSON.stringify(text));
    t.equal(await readFile(path, 'utf8'), `${kept.token}\n`);
  }
  await writeFile(path, 'a'.repeat(32), { mode: 0o600 });
  t.equal((await keptToken(8421, { folder })).token, 'a'.repeat(32), 'a token without its line feed is one');
});

t.test('a link is refused and never followed, --new-token or not: what it leads to is neither read nor written', async (t) => {
  const folder = await fresh();
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const target = join(base, `elsewhere-${n}`);
  await writeFile(target, `${'b'.repeat(32)}\n`, { mode: 0o600 });
  await symlink(target, tokenPath(8421, folder));
  for (const renew of [false, true]) {
    await t.rejects(keptToken(8421, { folder, renew }), { message: `refusing the token file ${tokenPath(8421, folder)}: it is a symbolic link (never followed). Remove it, and skillctl web makes a new one` });
  }
  t.equal(await readFile(target, 'utf8'), `${'b'.repeat(32)}\n`, 'the file it leads to is as it was');
  const dangling = await fresh();
  await mkdir(dangling, { recursive: true, mode: 0o700 });
  await symlink(join(base, 'nothing-there'), tokenPath(8421, dangling));
  await t.rejects(keptToken(8421, { folder: dangling }), /symbolic link/, 'a link to nothing is not made into a file there either');
  await t.rejects(stat(join(base, 'nothing-there')));
});

t.test('a file others may read or write is refused: the token may be known', async (t) => {
  const folder = await fresh();
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const path = tokenPath(8421, folder);
  await writeFile(path, `${'c'.repeat(32)}\n`);
  for (const [mode, said] of [[0o644, /mode 0644 lets every user read it/], [0o640, /mode 0640 lets its group read it/], [0o620, /mode 0620 lets its group write it/]] as const) {
    await chmod(path, mode);
    await t.rejects(keptToken(8421, { folder }), { message: said });
  }
  await chmod(path, 0o600);
  t.equal((await keptToken(8421, { folder })).token, 'c'.repeat(32));
});

t.test('something else than a file where the token goes is refused', async (t) => {
  const folder = await fresh();
  await mkdir(tokenPath(8421, folder), { recursive: true, mode: 0o700 });
  await t.rejects(keptToken(8421, { folder }), /it is not a regular file/);
  const fifo = await fresh();
  await mkdir(fifo, { recursive: true, mode: 0o700 });
  await promisify(execFile)('mkfifo', ['-m', '0600', tokenPath(8421, fifo)]);
  await t.rejects(keptToken(8421, { folder: fifo }), /it is not a regular file/, 'a FIFO is refused without waiting for a writer');
});

t.test("a file or a folder of another user's is refused", { skip: asRoot }, async (t) => {
  const folder = await fresh();
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const path = tokenPath(8421, folder);
  await writeFile(path, `${'d'.repeat(32)}\n`, { mode: 0o600 });
  await chown(path, OTHER_UID, OTHER_UID);
  await t.rejects(keptToken(8421, { folder }), { message: `refusing the token file ${path}: it is owned by uid ${OTHER_UID}, not by this user (uid 0). Remove it, and skillctl web makes a new one` });
  await t.rejects(keptToken(8421, { folder, renew: true }), /owned by uid 54321/, 'nor replaced');
  const theirs = await fresh();
  await mkdir(theirs, { recursive: true, mode: 0o700 });
  await chown(theirs, OTHER_UID, OTHER_UID);
  await t.rejects(keptToken(8421, { folder: theirs }), /refusing to keep the page's token in .*: it is owned by uid 54321/);
  t.same(await readdir(theirs), [], 'nothing written in it');
});

t.test('a folder others may write in, or a link in the folder\'s place, is refused', async (t) => {
  const open = await fresh();
  await mkdir(open, { recursive: true, mode: 0o700 });
  await chmod(open, 0o777);
  await t.rejects(keptToken(8421, { folder: open }), /writable by everyone .*another user could replace the token file/);
  const real = await fresh();
  await mkdir(real, { recursive: true, mode: 0o700 });
  const linked = await fresh();
  await symlink(real, linked);
  await t.rejects(keptToken(8421, { folder: linked }), /it is not a folder \(a symbolic link\?\)/);
  t.same(await readdir(real), []);
});
