import { constants } from 'node:fs';
import { open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { join, sep } from 'node:path';

// The one rule for the files a job leaves in its artifacts folder and for a skill's folder, kept
// here because both the daemon (listing artifacts, reading skills) and the MCP server (reading an
// artifact) apply it: nothing that resolves outside the folder is listed or read. A link that
// stays inside is followed; a hard link cannot be told from the file it names.

/** Where a path leads: inside the folder, outside it, or nowhere this user can reach (a dangling link, a file gone). */
export type Place = 'inside' | 'outside' | 'nowhere';

/** A regular file inside the folder, open for reading, with its size; or why it was not opened. */
export type Opened = { file: FileHandle; size: number } | { refused: Exclude<Place, 'inside'> | 'not_a_file' };

/** Errors of an open that say the path leads to nothing, rather than that the file could not be read. */
const LEADS_NOWHERE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);

/** True when the real path `real` is the folder whose real path is `root`, or lies below it. */
export function isWithin(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** Where `path` leads once every link in it is resolved, seen from the folder whose real path is `root`. */
export async function placeOf(root: string, path: string): Promise<Place> {
  const real = await realpath(path).catch(() => null);
  if (real === null) return 'nowhere';
  return isWithin(root, real) ? 'inside' : 'outside';
}

/**
 * Every entry below `dir` (files, folders, links), as paths relative to it, sorted. Links to
 * folders are listed, never entered: a link to `..` would otherwise list the tree above, and
 * again, until the path is too long.
 */
export async function listTree(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = rel === '' ? entry.name : join(rel, entry.name);
      found.push(path);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk('');
  return found.sort();
}

/**
 * Opens `path` for reading when it leads to a regular file inside the folder whose real path is
 * `root`. Where the file lies is asked of the open descriptor (Linux's /proc/self/fd), not of the
 * path, so a link planted or swapped after a listing or a check cannot redirect the read. Errors
 * other than a path leading nowhere (EACCES, say) are thrown as they are.
 */
export async function openWithin(root: string, path: string): Promise<Opened> {
  // O_NONBLOCK: a FIFO in place of a file does not hold the open; O_NOCTTY: a terminal never becomes ours.
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch((error: NodeJS.ErrnoException) => {
    if (LEADS_NOWHERE.has(error.code ?? '')) return null;
    throw error;
  });
  if (file === null) return { refused: 'nowhere' };
  try {
    const [where, info] = await Promise.all([openedPath(file), file.stat()]);
    const refused = !isWithin(root, where) ? 'outside' : info.isFile() ? null : 'not_a_file';
    if (refused === null) return { file, size: info.size };
    await file.close();
    return { refused };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** Where the kernel says an open file lies; throws where /proc cannot tell (not Linux). */
async function openedPath(file: FileHandle): Promise<string> {
  try {
    return await readlink(`/proc/self/fd/${file.fd}`);
  } catch (error) {
    throw new Error(`cannot tell where an open file lies (/proc/self/fd: ${(error as Error).message}); files are read only where Linux's /proc can tell`, { cause: error });
  }
}
