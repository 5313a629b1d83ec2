/** A skill folder's files read at one moment: relative path → bytes. A job is created with such a snapshot of its skill, which later edits never reach. */
export type SkillFiles = ReadonlyMap<string, Buffer>;

/** The folder of a skill's test cases (`skillctl skills test`, docs/skills.md): the author's, never the job's. */
export const TESTS_FOLDER = 'tests';

/**
 * The files a job's engine is given of its skill: all but its test cases, whose scripted turns
 * and expected outputs are no instructions for a real run.
 */
export function jobSkillFiles(files: SkillFiles): SkillFiles {
  return new Map([...files].filter(([rel]) => rel !== TESTS_FOLDER && !rel.startsWith(`${TESTS_FOLDER}/`)));
}
