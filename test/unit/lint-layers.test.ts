// The floor plan's import rules (.dependency-cruiser.cjs, `npm run lint:layers`, docs/layout.md):
// the real tree keeps them, and the check does fail on an upward import, an import of a folder
// beside on the same floor, and a circle made of type-only imports.
import t from 'tap';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
const tsConfig = extractTSConfig(join(ROOT, 'tsconfig.json'));

/** The rules' violations among the modules under `paths` of `baseDir`. */
async function violations(baseDir: string, paths: string[]): Promise<IViolation[]> {
  const { output } = await cruise(paths, { ...options, baseDir }, {}, { tsConfig });
  return (output as ICruiseResult).summary.violations;
}

function shown(found: IViolation[]): string {
  return found.map((v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle === undefined ? '' : ` (${v.cycle.map((step) => step.name).join(' → ')})`}`).join('\n');
}

t.test('the tree keeps the floor plan: no upward import, no import circle in daemon/, rpc/ or clients/', async (t) => {
  const found = await violations(ROOT, ['daemon', 'rpc', 'clients']);
  t.same(shown(found), '', 'no violation');
});

t.test('every folder of daemon/ is on a floor, with its rule', async (t) => {
  const folders = (await readdir(join(ROOT, 'daemon'), { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const rules = new Set((options.ruleSet?.forbidden ?? []).map((rule) => rule.name));
  t.ok(folders.length > 0);
  for (const folder of folders) t.ok(rules.has(`${folder}-imports-no-floor-above`), `daemon/${folder}/ has its rule`);
});

t.test('the check fails where the plan is broken, naming the rule', async (t) => {
  const tree = await mkdtemp(join(tmpdir(), 'skilld-layers-'));
  t.teardown(() => rm(tree, { recursive: true, force: true }));
  const files: Record<string, string> = {
    // Upward, and by a type only: the model imports the supervisor.
    'daemon/model/upward.ts': "import type { Supervisor } from '../jobs/supervisor.js';\nexport type Held = Supervisor;\n",
    'daemon/jobs/supervisor.ts': 'export interface Supervisor {\n  apply(): void;\n}\n',
    // Beside, on the same floor: skills/ and slots/ do not import each other.
    'daemon/skills/beside.ts': "import { SLOTS } from '../slots/pool.js';\nexport const COUNT = SLOTS;\n",
    'daemon/slots/pool.ts': 'export const SLOTS = 4;\n',
    // Up to the root, from the cluster.
    'daemon/cluster/root.ts': "import { READY } from '../main.js';\nexport const STARTED = READY;\n",
    'daemon/main.ts': 'export const READY = true;\n',
    // A circle of type-only imports within one folder.
    'daemon/engines/one.ts': "import type { Two } from './two.js';\nexport interface One {\n  two: Two;\n}\n",
    'daemon/engines/two.ts': "import type { One } from './one.js';\nexport interface Two {\n  one: One;\n}\n",
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), text);
  }
  const found = await violations(tree, ['daemon']);
  const named = (rule: string, from: string): IViolation | undefined => found.find((v) => v.rule.name === rule && v.from === from);
  t.match(named('model-imports-no-floor-above', 'daemon/model/upward.ts'), { to: 'daemon/jobs/supervisor.ts', rule: { severity: 'error' } }, 'an upward import, by a type only');
  t.match(named('skills-imports-no-floor-above', 'daemon/skills/beside.ts'), { to: 'daemon/slots/pool.ts' }, 'a folder beside on the same floor');
  t.match(named('cluster-imports-no-floor-above', 'daemon/cluster/root.ts'), { to: 'daemon/main.ts' }, 'the daemon root is the top floor');
  t.ok(found.some((v) => v.rule.name === 'no-circular' && v.from.startsWith('daemon/engines/')), 'a circle of type-only imports');
  t.equal(found.length, 4, 'nothing else: the jobs, slots, root and engines files of the tree break no rule');
});
