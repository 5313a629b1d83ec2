import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { checkFolderTrust, type FolderUse } from '../../rpc/folder-trust.js';

/** A new token: 24 random bytes, base64url (32 characters). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** What a kept token file holds: one token as `newToken` makes it, and a line feed. */
const TOKEN_FORM = /^[A-Za-z0-9_-]{32}\n?$/;

/** The most bytes read of a token file: a file larger than a token is not one. */
const MOST_BYTES = 64;

/** The token's folder, as a refusal tells it: whoever may write there may put a token of their own in place. */
const TOKEN_FOLDER: FolderUse = { action: "keep the page's token in", risk: 'replace the token file' };

/**
 * Where `skillctl web --port N` keeps its token: `$XDG_STATE_HOME/skilld` (an absolute one: the
 * XDG spec ignores a relative one), else `~/.local/state/skilld`, the daemon's own default state
 * folder, which is the user's alone.
 */
export function tokenFolder(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const state = env['XDG_STATE_HOME'];
  return join(state !== undefined && isAbsolute(state) ? state : join(home, '.local', 'state'), 'skilld');
}

/** The kept token's file for `port`: one per port, as each port is a page of its own (and a cookie of its own). */
export function tokenPath(port: number, folder = tokenFolder()): string {
  return join(folder, `web-${port}.token`);
}

/** What `keptToken` found or did. */
export interface KeptToken {
  token: string;
  path: string;
  /** `kept`: read from the file; `new`: the file was missing, or `--new-token` asked; `replaced`: the file held no token. */
  made: 'kept' | 'new' | 'replaced';
}

/**
 * The token of the page on a fixed `port`, kept across starts so that the printed address (and a
 * bookmarked one) and a signed-in browser's cookie stay good: read from its file when the file
 * holds one, else made and written there; with `renew`, made anew and written over it. The folder
 * is made 0700 and must be trusted as the daemon trusts its state folder (`checkFolderTrust`); the
 * file must be a regular file of this user's that nobody else may read or write, opened without
 * following a link (O_NOFOLLOW), since a token someone else can read lets them act as this user
 * through the page, and one they can write or link lets them choose it. Anything else is refused
 * (thrown), `renew` or not: it is no state a person would leave there, and the refusal says which
 * file, why, and to remove it. A new file is written whole or not at all (a temp file of mode 0600,
 * synced, then renamed over the old one).
 */
export async function keptToken(port: number, options: { renew?: boolean; folder?: string; uid?: number } = {}): Promise<KeptToken> {
  const folder = options.folder ?? tokenFolder();
  const uid = options.uid ?? process.getuid?.() ?? 0;
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await checkFolderTrust(folder, TOKEN_FOLDER, uid);
  const path = tokenPath(port, folder);
  const held = await readTokenFile(path, uid);
  if (held !== null && options.renew !== true) {
    if (TOKEN_FORM.test(held)) return { token: held.trim(), path, made: 'kept' };
  }
  const token = newToken();
  await writeTokenFile(path, token);
  return { token, path, made: held === null || options.renew === true ? 'new' : 'replaced' };
}

/** The file's text, or null when there is none; throws when the file is not one this user alone may read and write. */
async function readTokenFile(path: string, uid: number): Promise<string | null> {
  const refuse = (why: string): never => {
    throw new Error(`refusing the token file ${path}: ${why}. Remove it, and skillctl web makes a new one`);
  };
  let file;
  try {
    // O_NONBLOCK: a FIFO put in its place would otherwise hold the open until someone writes to it.
    file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') return refuse('it is a symbolic link (never followed)');
    throw error;
  }
  try {
    const info = await file.stat();
    if (!info.isFile()) return refuse('it is not a regular file');
    if (info.uid !== uid) return refuse(`it is owned by uid ${info.uid}, not by this user (uid ${uid})`);
    if ((info.mode & 0o077) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
      return refuse(`its mode ${mode} lets ${(info.mode & 0o007) !== 0 ? 'every user' : 'its group'} ${(info.mode & 0o044) !== 0 ? 'read' : 'write'} it (the token may be known: make a new one)`);
    }
    const buffer = Buffer.alloc(MOST_BYTES);
    const { bytesRead } = await file.read(buffer, 0, MOST_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await file.close();
  }
}

/** Writes `token` to `path` whole or not at all: a new temp file of mode 0600 beside it (never through a link), synced, renamed over it. */
async function writeTokenFile(path: string, token: string): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const file = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await file.writeFile(`${token}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncFolder(dirname(path));
}

/** Makes the rename itself last through a power cut. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
