import t from 'tap';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { realEngineBins } from '../../clients/skill-test/engine-homes.js';
import { processesIn } from '../../clients/skill-test/temp-folder.js';
import { runSkillctl, type Outcome } from '../helpers/skillctl.js';
import { ROOT } from '../helpers/daemon.js';

/**
 * `skillctl skills test`: a skill's cases through the real engine CLIs (dev dependencies) and the
 * scripted model, on a private daemon that skillctl starts and removes itself. No daemon runs
 * here: SKILLD_SOCKET names a socket that does not exist.
 */
const bins = realEngineBins(join(ROOT, 'node_modules'));
// Real CLIs, a few seconds a case on a busy machine.
t.setTimeout(300_000);

const scratch = await mkdtemp(join(tmpdir(), 'skills-test-e2e-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
/** Its temp folder: what skills test leaves behind would be seen here. */
const temp = join(scratch, 'tmp');
await mkdir(temp);
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SKILLD_'))), TMPDIR: temp, SKILLD_SOCKET: join(scratch, 'no-daemon.sock'), XDG_CONFIG_HOME: join(scratch, 'config') };

function skillctl(...argv: string[]): Promise<Outcome> {
  return runSkillctl(argv, env, { cwd: scratch, timeoutMs: 240_000 });
}

const noCodex = bins.codex === null ? 'the real codex CLI is not installed in node_modules (npm ci installs it as a dev dependency); these tests did NOT run' : false;

t.test('skills new, then skills test: the scaffolded case passes, with no daemon running, and nothing is left behind', { skip: noCodex }, async (t) => {
  t.equal((await skillctl('skills', 'new', 'greeter', '--dir', scratch)).code, 0);
  const tested = await skillctl('skills', 'test', join(scratch, 'greeter'));
  t.equal(tested.code, 0, tested.stderr);
  t.match(tested.stdout, /^ok {4}answers unattended {2}\(codex, auto, job-[0-9a-z-]+\)\ngreeter: 1 passed, 0 failed\n$/);
  t.same(await readdir(temp), [], 'its daemon, model server and folder are gone');
  t.equal((await skillctl('skills', 'validate', join(scratch, 'greeter'))).code, 0);
});

t.test('a case whose output differs fails, exit 1, showing each difference; --case runs one case; --json reports them', { skip: noCodex }, async (t) => {
  const folder = join(scratch, 'greeter');
  const good = JSON.parse(await readFile(join(folder, 'tests', 'auto.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(folder, 'tests', 'wrong.json'), JSON.stringify({ ...good, name: 'expects another result', expect: { status: 'succeeded', output: { result: 'Goodbye.' }, artifacts: ['report.md'] } }));
  const failed = await skillctl('skills', 'test', folder);
  t.equal(failed.code, 1, failed.stderr);
  t.match(failed.stdout, 'ok    answers unattended  (codex, auto, job-');
  t.match(failed.stdout, /FAIL {2}expects another result {2}\(codex, auto, job-[^)]+\)\n {6}output\.result:\n {8}- expected "Goodbye\."\n {8}\+ got {6}"Hello, world: a greeting, in two words\."\n {6}artifacts:\n {8}- expected report\.md\n {8}\+ got {6}\(none\)\n/);
  t.match(failed.stdout, /greeter: 1 passed, 1 failed\n$/);
  const one = await skillctl('skills', 'test', folder, '--case', 'expects another result', '--json', '--keep');
  t.equal(one.code, 1);
  const report = JSON.parse(one.stdout) as { kept: string; cases: Array<{ job_id: string }> };
  t.match(report, { skill_id: 'greeter', passed: 0, failed: 1, cases: [{ name: 'expects another result', file: 'tests/wrong.json', engine: 'codex', mode: 'auto', passed: false, status: 'succeeded', differences: [{ path: 'output.result' }, { path: 'artifacts' }] }] });
  // --keep: the folder stays, with the daemon's log and the case's run folder; nothing runs in it.
  t.equal(dirname(report.kept), await realpath(temp));
  t.match(await readFile(join(report.kept, 'skilld.log'), 'utf8'), 'skilld ready');
  t.match(await readFile(join(report.kept, 'state', 'runs', report.cases[0]?.job_id as string, 'attempts', '1', 'stdout.log'), 'utf8'), 'Hello, world');
  t.same(processesIn(report.kept), [], 'the test daemon and its engines are stopped');
  const kept = await skillctl('skills', 'test', folder, '--case', 'answers unattended', '--keep');
  t.equal(kept.code, 0);
  const keptDir = /^kept (\S+):$/m.exec(kept.stdout)?.[1] as string;
  t.match(kept.stdout, `state/runs/<job id>/`);
  t.match(kept.stdout, `remove it with: rm -rf ${keptDir}`);
  for (const dir of [report.kept, keptDir]) await rm(dir, { recursive: true });
  const none = await skillctl('skills', 'test', folder, '--case', 'nothing like it');
  t.equal(none.code, 2);
  t.match(none.stderr, 'no case is named "nothing like it"; the cases: "answers unattended", "expects another result"');
  const iflow = await skillctl('skills', 'test', folder, '--engine', 'iflow');
  t.equal(iflow.code, 2);
  t.match(iflow.stderr, 'skills test does not support iflow: the iFlow CLI has no setting for the address of its model provider');
  await writeFile(join(folder, 'tests', 'wrong.json'), JSON.stringify({ ...good, model: [{ ask: { kind: 'maybe', prompt: 'Sure?' } }] }));
  const invalid = await skillctl('skills', 'validate', folder);
  t.equal(invalid.code, 1);
  t.equal(invalid.stderr, 'skillctl: SKILL_TEST_INVALID: tests/wrong.json: model[0].ask.kind must be one of open_text, choose_one, confirm\n');
  t.equal((await skillctl('skills', 'test', folder)).stderr, 'skillctl: tests/wrong.json: model[0].ask.kind must be one of open_text, choose_one, confirm\n');
  t.same(await readdir(temp), []);
});

for (const engine of ['codex', 'gemini', 'claude'] as const) {
  const skip = bins[engine] === null ? `the real ${engine} CLI is not installed in node_modules; these tests did NOT run` : false;
  t.test(`${engine}: an interactive case (ask, reply, final) and a tool case (run writes an artifact the case expects) pass`, { skip }, async (t) => {
    const tested = await skillctl('skills', 'test', join(ROOT, 'skills', 'write-commit-message'), '--engine', engine);
    t.equal(tested.code, 0, `${tested.stdout}${tested.stderr}`);
    t.match(tested.stdout, `ok    asks the purpose, then answers  (${engine}, interactive, job-`);
    t.match(tested.stdout, `ok    reads the diff and writes COMMIT_MSG.txt  (${engine}, auto, job-`);
    t.match(tested.stdout, /write-commit-message: 2 passed, 0 failed\n$/);
  });
}

t.test('the bundled skills pass their own cases, a skill named by its id', { skip: noCodex }, async (t) => {
  for (const skill of ['summarize-text', 'plan-trip']) {
    const tested = await skillctl('skills', 'test', skill);
    t.equal(tested.code, 0, `${tested.stdout}${tested.stderr}`);
    t.match(tested.stdout, new RegExp(`${skill}: [1-9] passed, 0 failed\\n$`));
  }
});
