import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** A skill folder larger than this is refused: skills are prompts and schemas, not data sets. */
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;

/** A skill folder's files read at one moment: relative path → bytes. */
export type SkillFiles = ReadonlyMap<string, Buffer>;

/**
 * Reads every regular file under `dir` into memory, so that validation and the job snapshot see
 * the same bytes even while an editor is still saving. Symlinks are followed.
 */
export async function readSkillFiles(dir: string): Promise<SkillFiles> {
  const files = new Map<string, Buffer>();
  let total = 0;
  const entries = (await readdir(dir, { recursive: true })).sort();
  for (const rel of entries) {
    const path = join(dir, rel);
    const info = await stat(path).catch(() => null);
    if (info === null || !info.isFile()) continue;
    total += info.size;
    if (total > MAX_SKILL_BYTES) throw new RangeError(`skill folder is larger than ${MAX_SKILL_BYTES} bytes`);
    const bytes = await readFile(path).catch(() => null);
    if (bytes !== null) files.set(rel, bytes);
  }
  return files;
}
