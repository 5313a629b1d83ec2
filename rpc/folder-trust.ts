import { lstat, realpath } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** What a folder is for, as a refusal tells it: what the daemon would do there, and what another user could then do. */
export interface FolderUse {
  /** `listen in`, `keep state in`. */
  action: string;
  /** `replace the socket`. */
  risk: string;
}

/** The socket's folder: whoever may write there (a `/tmp/skilld-<uid>` made first by another user, say) may put a socket of their own in the daemon's place. */
export const SOCKET_FOLDER: FolderUse = { action: 'listen in', risk: 'replace the socket' };

const STICKY = 0o1000;

/**
 * Refuses a folder that a user other than `uid` (and root) could change, as OpenSSH's
 * `StrictModes` does: the folder must be a real folder (not a symbolic link), owned by `uid` or
 * root and writable by nobody else; every folder above it up to `/`, both along the path as
 * written and along the path its symbolic links lead to, owned by `uid` or root and writable by
 * nobody else unless sticky (as `/tmp`), since whoever may rename entries of a folder above may
 * put another folder in this one's place. The folder must exist. Throws a message naming the
 * folder at fault, why, and what another user could do.
 */
export async function checkFolderTrust(folder: string, use: FolderUse, uid = process.getuid?.() ?? 0): Promise<void> {
  const refuse = (at: string, why: string): never => {
    throw new Error(`refusing to ${use.action} ${folder}: ${why}; another user could ${use.risk}. Use a folder of your own, or fix ${at} (chown, chmod go-w)`);
  };
  const info = await lstat(folder);
  if (!info.isDirectory()) refuse(folder, 'it is not a folder (a symbolic link?)');
  const own = problem(info, uid, false);
  if (own !== null) refuse(folder, `it ${own}`);
  for (const above of await foldersAbove(folder)) {
    const found = await lstat(above);
    // A link's own bits mean nothing: the folder holding it is checked next, where it leads on the real path.
    if (found.isSymbolicLink()) continue;
    const why = problem(found, uid, true);
    if (why !== null) refuse(above, `${above}, a folder above it, ${why}`);
  }
}

/** What makes a folder untrusted, or null: its owner, or write for the group or others (allowed above the folder when sticky). */
function problem(info: Stats, uid: number, stickyAllowed: boolean): string | null {
  if (info.uid !== uid && info.uid !== 0) return `is owned by uid ${info.uid}, not by this user (uid ${uid}) or root`;
  if ((info.mode & 0o022) === 0 || (stickyAllowed && (info.mode & STICKY) !== 0)) return null;
  const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
  return `is writable by ${(info.mode & 0o002) !== 0 ? 'everyone' : 'its group'} (mode ${mode})${stickyAllowed ? ' and not sticky' : ''}`;
}

/** Every folder above `folder`, nearest first, as written and as its links lead; each once. */
async function foldersAbove(folder: string): Promise<string[]> {
  const found = new Set([...parents(resolve(folder)), ...parents(await realpath(folder))]);
  return [...found];
}

function parents(path: string): string[] {
  const list: string[] = [];
  for (let at = path, up = dirname(at); up !== at; at = up, up = dirname(at)) list.push(up);
  return list;
}
