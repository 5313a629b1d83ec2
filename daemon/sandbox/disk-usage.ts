import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The disk space a job's folder takes, in bytes: every entry below it, by its allocated blocks
 * (a sparse file counts what it holds), links counted as themselves and never followed, each
 * inode once (hard links). A folder that is gone takes nothing; an entry that vanishes while it
 * is walked is skipped.
 */
export async function diskUsage(dir: string): Promise<number> {
  const seen = new Set<string>();
  const walk = async (path: string): Promise<number> => {
    const stat = await lstat(path, { bigint: true }).catch(() => null);
    if (stat === null) return 0;
    const inode = `${stat.dev}:${stat.ino}`;
    if (seen.has(inode)) return 0;
    seen.add(inode);
    const own = Number(stat.blocks) * 512;
    if (!stat.isDirectory()) return own;
    const entries = await readdir(path).catch(() => []);
    const sizes = await Promise.all(entries.map((name) => walk(join(path, name))));
    return sizes.reduce((sum, size) => sum + size, own);
  };
  return walk(dir);
}
