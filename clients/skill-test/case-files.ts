import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TESTS_FOLDER } from '../../daemon/model/skill-snapshot.js';
import { CaseFileError, isCaseFile, parseCase, type TestCase } from './case-file.js';

export { TESTS_FOLDER };

/** The cases of the skill in `skillDir`, in file-name order; none without a `tests/` folder. Throws CaseFileError at the first bad file, or two cases of one name. */
export async function loadCases(skillDir: string): Promise<TestCase[]> {
  const folder = join(skillDir, TESTS_FOLDER);
  let names: string[];
  try {
    names = (await readdir(folder)).filter(isCaseFile).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const cases: TestCase[] = [];
  for (const name of names) {
    const file = join(TESTS_FOLDER, name);
    const parsed = parseCase(await readFile(join(folder, name), 'utf8'), file);
    const twin = cases.find((c) => c.name === parsed.name);
    if (twin !== undefined) throw new CaseFileError(file, 'name', `"${parsed.name}" is the name of ${twin.file} too: each case needs its own`);
    cases.push(parsed);
  }
  return cases;
}
