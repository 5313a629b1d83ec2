// Which folders the daemon trusts with its socket and its state: its own or root's, writable by
// nobody else, and so every folder above them, unless sticky. "Another user" is a uid that owns
// no account, given folders with chown (the tests run as root; elsewhere they skip).
import t from 'tap';
import { chmod, chown, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFolderTrust, SOCKET_FOLDER } from '../../rpc/folder-trust.js';

const OTHER_UID = 54321;
const asRoot = process.getuid?.() === 0 ? false : 'needs root to give folders to another user';
// Folders made along the way are 0755 whatever the caller's umask, as the tests expect.
process.umask(0o022);
const root = await mkdtemp(join(tmpdir(), 'skilld-trust-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

/** Makes `path` (and what is missing above it) with `mode`, owned by `uid`. */
async function folder(path: string, mode: number, uid = 0): Promise<string> {
  await mkdir(path, { recursive: true });
  await chmod(path, mode);
  if (uid !== 0) await chown(path, uid, uid);
  return path;
}

async function refusal(path: string, uid = 0): Promise<string> {
  return checkFolderTrust(path, SOCKET_FOLDER, uid).then(() => 'trusted', (error: Error) => error.message);
}

t.test('a folder of ours inside a world-writable folder that is not sticky is refused, naming the folder above', async (t) => {
  const open = await folder(join(root, 'open'), 0o777);
  const mine = await folder(join(open, 'skilld'), 0o700);
  const message = await refusal(mine);
  t.match(message, `refusing to listen in ${mine}: ${open}, a folder above it, is writable by everyone (mode 0777) and not sticky`);
  t.match(message, `another user could replace the socket. Use a folder of your own, or fix ${open} (chown, chmod go-w)`);
});

t.test('a folder above that its group may write, without the sticky bit, is refused', async (t) => {
  const shared = await folder(join(root, 'group'), 0o775);
  t.match(await refusal(await folder(join(shared, 'deeper', 'skilld'), 0o700)), `${shared}, a folder above it, is writable by its group (mode 0775) and not sticky`);
});

t.test('a sticky world-writable folder above, owned by root, is trusted (as /tmp)', async (t) => {
  const sticky = await folder(join(root, 'tmp-like'), 0o1777);
  t.equal(await refusal(await folder(join(sticky, 'skilld-0'), 0o700)), 'trusted');
});

t.test('a folder above owned by another user is refused, even 0755 or sticky: its owner may rename what it holds', { skip: asRoot }, async (t) => {
  for (const mode of [0o755, 0o1777]) {
    const theirs = await folder(join(root, `theirs-${mode.toString(8)}`), mode, OTHER_UID);
    t.match(await refusal(await folder(join(theirs, 'skilld'), 0o700)), `${theirs}, a folder above it, is owned by uid ${OTHER_UID}, not by this user (uid 0) or root`);
  }
});

t.test('the folder itself: a symbolic link, another owner, or write for the group or others is refused', { skip: asRoot }, async (t) => {
  const base = await folder(join(root, 'self'), 0o755);
  t.match(await refusal(await folder(join(base, 'others'), 0o1777)), 'it is writable by everyone (mode 1777); another user could replace the socket');
  t.match(await refusal(await folder(join(base, 'group'), 0o770)), 'it is writable by its group (mode 0770)');
  t.match(await refusal(await folder(join(base, 'owned'), 0o700, OTHER_UID)), `it is owned by uid ${OTHER_UID}`);
  await symlink(await folder(join(base, 'real'), 0o700), join(base, 'link'));
  t.match(await refusal(join(base, 'link')), 'it is not a folder (a symbolic link?)');
});

t.test('a symbolic link above the folder: the folders it leads to are checked too', async (t) => {
  const open = await folder(join(root, 'links', 'open'), 0o777);
  const safe = await folder(join(root, 'links', 'safe'), 0o755);
  await folder(join(open, 'skilld'), 0o700);
  await folder(join(safe, 'skilld'), 0o700);
  await symlink(open, join(root, 'links', 'to-open'));
  await symlink(safe, join(root, 'links', 'to-safe'));
  t.match(await refusal(join(root, 'links', 'to-open', 'skilld')), `${open}, a folder above it, is writable by everyone (mode 0777)`);
  t.equal(await refusal(join(root, 'links', 'to-safe', 'skilld')), 'trusted', 'a link to a trusted folder is followed');
});

t.test('the folders of the systemd units and the defaults are trusted', { skip: asRoot }, async (t) => {
  // As made for User=skilld: RuntimeDirectory= (RuntimeDirectoryMode=0750) and StateDirectory= (0700) in root's 0755 folders.
  const system = await folder(join(root, 'system'), 0o755);
  for (const [path, mode] of [['run/skilld', 0o750], ['var/lib/skilld', 0o700]] as const) {
    const made = join(system, path);
    await folder(join(made, '..'), 0o755);
    t.equal(await refusal(await folder(made, mode, OTHER_UID), OTHER_UID), 'trusted', path);
  }
  // A user's own: $XDG_RUNTIME_DIR/skilld (/run/user/<uid>, 0700), ~/.local/state/skilld, /tmp/skilld-<uid>.
  const runtime = await folder(join(system, 'run', 'user', String(OTHER_UID)), 0o700, OTHER_UID);
  t.equal(await refusal(await folder(join(runtime, 'skilld'), 0o700, OTHER_UID), OTHER_UID), 'trusted', 'XDG_RUNTIME_DIR');
  const home = await folder(join(system, 'home', 'alice'), 0o750, OTHER_UID);
  await folder(join(home, '.local', 'state'), 0o755, OTHER_UID);
  await chown(join(home, '.local'), OTHER_UID, OTHER_UID);
  t.equal(await refusal(await folder(join(home, '.local', 'state', 'skilld'), 0o700, OTHER_UID), OTHER_UID), 'trusted', '~/.local/state');
  t.equal(await refusal(await folder(join(tmpdir(), `skilld-trust-${OTHER_UID}-${process.pid}`), 0o700, OTHER_UID), OTHER_UID), 'trusted', `${tmpdir()} (sticky) as /tmp`);
  await rm(join(tmpdir(), `skilld-trust-${OTHER_UID}-${process.pid}`), { recursive: true });
});
