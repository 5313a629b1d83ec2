import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { listTree, openWithin } from '../../rpc/within-folder.js';
import type { SkillFiles } from '../model/skill-snapshot.js';

/** A skill folder larger than this is refused: skills are prompts and schemas, not data sets. */
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;

/** An entry of a skill folder that leads outside it (a symbolic link): the skill cannot be read as it stands. */
export class OutsideSkillError extends Error {
  override readonly name = 'OutsideSkillError';
  /** The link, in the skill folder. */
  readonly path: string;

  constructor(path: string, rel: string) {
    super(`${rel} leads outside the skill folder (a symbolic link); nothing outside a skill's folder is read: copy the file in`);
    this.path = path;
  }
}

/**
 * Reads every regular file under `dir` into memory, so that validation and the job snapshot see
 * the same bytes even while an editor is still saving. A link that stays inside the folder is
 * read as the file it names; an entry that leads outside it throws OutsideSkillError. The folder
 * itself may be a link: inside means inside its real path.
 */
export async function readSkillFiles(dir: string): Promise<SkillFiles> {
  const root = await realpath(dir);
  const files = new Map<string, Buffer>();
  let total = 0;
  for (const rel of await listTree(dir)) {
    const opened = await openWithin(root, join(dir, rel));
    if ('refused' in opened) {
      if (opened.refused === 'outside') throw new OutsideSkillError(join(dir, rel), rel);
      continue; // a folder, a dangling link, a file removed since it was listed
    }
    try {
      total += opened.size;
      if (total > MAX_SKILL_BYTES) throw new RangeError(`skill folder is larger than ${MAX_SKILL_BYTES} bytes`);
      files.set(rel, await opened.file.readFile());
    } finally {
      await opened.file.close();
    }
  }
  return files;
}
