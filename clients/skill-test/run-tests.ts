import { cp } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { SkillDefinition } from '../../daemon/skills/manifest.js';
import { RpcClient } from '../../rpc/client.js';
import { CaseFileError, type TestCase } from './case-file.js';
import { loadCases, TESTS_FOLDER } from './case-files.js';
import { CaseModel } from './case-model.js';
import { planCases, SkillTestError, type PlannedCase } from './case-plan.js';
import { engineCommand, TESTABLE_ENGINES, type UserSetup } from './engine-command.js';
import { makeClaudeHome, makeCodexHome, makeGeminiHome, type EngineHome } from './engine-homes.js';
import { startModelServer } from './model-server.js';
import { startDaemon, stopDaemon } from './private-daemon.js';
import { runCase, type CaseResult } from './run-case.js';
import { makeTempFolder, removeFolder, stopProcessesIn } from './temp-folder.js';

/** What `skills test` runs. */
export interface SkillTestRun {
  /** The skill's folder. */
  skillDir: string;
  engine: string | null;
  caseName: string | null;
  /** Keep the private daemon's folder (its log, the run folders) after it stops. */
  keep: boolean;
  setup: UserSetup;
  /** Told of each case as it ends. */
  onCase(result: CaseResult): void;
  /** Receives the stop of everything started, at once: to run on a signal. */
  onCleanup(stop: () => Promise<void>): void;
}

/** The skill tested and each case's result, in the order they ran. */
export interface SkillTestReport {
  skillId: string;
  results: CaseResult[];
  /** The folder kept (`keep`), else null. */
  kept: string | null;
}

const HOMES = { codex: makeCodexHome, gemini: makeGeminiHome, claude: makeClaudeHome } as const;

/**
 * Runs a skill's cases against a private daemon in a temp folder: a copy of the skill, the
 * scripted model server, a home for each engine pointed at it, then every case one after the
 * other. The daemon is started first, and the skill and its cases are read while it starts: its
 * start is most of what a short run waits for. Everything is stopped and removed at the end (the
 * folder kept with `keep`), after a failure too.
 */
export async function runSkillTests(run: SkillTestRun): Promise<SkillTestReport> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  run.onCleanup(stopAll);
  try {
    const dir = await makeTempFolder('skilld-skills-test-');
    // Kept, the folder outlives the daemon, but no process of it does.
    stops.push(async () => (run.keep ? stopProcessesIn(dir) : removeFolder(dir)));
    // The daemon names a skill by its folder's name, as skills validate does.
    await cp(run.skillDir, join(dir, 'skills', basename(run.skillDir)), { recursive: true, verbatimSymlinks: true });
    let current: CaseModel | null = null;
    const server = await startModelServer({ script: (request) => current?.reply(request) ?? { text: 'No test case is running.' }, onUnknown: () => undefined });
    stops.push(() => server.close());
    const found = TESTABLE_ENGINES.flatMap((engine) => {
      const command = engineCommand(engine, run.setup);
      return command === null ? [] : [[engine, command] as const];
    });
    const config: Record<string, unknown> = { engines: {}, max_concurrent: 1, kill_grace_ms: 2000, hard_timeout_sec: 300, session_timeout_sec: 600 };
    for (const [engine, command] of found) {
      const home: EngineHome = await HOMES[engine](server.url, { dir: join(dir, `${engine}-home`) });
      // Resumable: each turn a process of its own, as the probe finds for these CLIs, without the probe's cost.
      (config['engines'] as Record<string, unknown>)[engine] = { command: command.command, env: home.env, profile: 'resumable', sandbox: { read_only: command.readOnly } };
    }
    const starting = startDaemon({ dir, skillsDir: join(dir, 'skills'), config }, (started) => stops.push(() => stopDaemon(started)));
    // Not awaited while the skill is read: a skill found invalid meanwhile stops it, and its start's end is of no interest then.
    starting.catch(() => undefined);
    const { skill, planned } = await readSkill(run);
    for (const engine of new Set(planned.map((p) => p.engine))) {
      if (!found.some(([name]) => name === engine)) throw new SkillTestError(`no ${engine} CLI: the configuration names none, skilld's package has none installed, and it is not on the PATH`);
    }
    const daemon = await starting;
    const client = await RpcClient.connect(daemon.socket);
    stops.push(async () => client.close());
    const results: CaseResult[] = [];
    for (const one of planned) {
      current = new CaseModel(one.testCase);
      const result = await runCase(client, skill.id, one, current, join(dir, 'state', 'runs'));
      results.push(result);
      run.onCase(result);
    }
    return { skillId: skill.id, results, kept: run.keep ? dir : null };
  } finally {
    await stopAll();
  }
}

/** The skill as the daemon loads it, and its cases planned: the ones chosen, each with its engine and mode. */
async function readSkill(run: SkillTestRun): Promise<{ skill: SkillDefinition; planned: PlannedCase[] }> {
  const { SkillLoadError, loadSkill } = await import('../../daemon/skills/manifest.js');
  const skill = await loadSkill(run.skillDir).catch((error: unknown) => {
    throw error instanceof SkillLoadError ? new SkillTestError(`the skill is invalid: ${error.code}: ${error.message} (${error.path})`) : error;
  });
  const cases = chosen(await loadCases(run.skillDir).catch(wrapCaseError), run.caseName, run.skillDir);
  const planned = planCases(cases.map((c) => withInputPaths(c, Object.keys(skill.input_paths), run.skillDir)), skill, run.engine);
  return { skill, planned };
}

/** The case with each input the skill names in `input_paths` made absolute: a relative path is taken from the case file's folder. */
function withInputPaths(testCase: TestCase, names: readonly string[], skillDir: string): TestCase {
  const input = { ...testCase.input };
  for (const name of names) {
    const value = input[name];
    if (typeof value === 'string' && value !== '' && !isAbsolute(value)) input[name] = resolve(skillDir, dirname(testCase.file), value);
  }
  return { ...testCase, input };
}

function wrapCaseError(error: unknown): never {
  throw error instanceof CaseFileError ? new SkillTestError(error.message) : error;
}

/** The cases to run: all, or the one named by `--case`. */
function chosen(cases: TestCase[], name: string | null, skillDir: string): TestCase[] {
  if (cases.length === 0) throw new SkillTestError(`${basename(skillDir)} has no test cases: write ${TESTS_FOLDER}/<case>.json (docs/skills.md, "Testing a skill"), or see one that skillctl skills new writes`);
  if (name === null) return cases;
  const found = cases.filter((c) => c.name === name);
  if (found.length === 0) throw new SkillTestError(`no case is named ${JSON.stringify(name)}; the cases: ${cases.map((c) => JSON.stringify(c.name)).join(', ')}`, true);
  return found;
}
