import { cp, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { RpcClient } from '../../rpc/client.js';
import { canRun, type EngineView, type SkillView } from '../wire.js';
import { CaseFileError, type TestCase } from './case-file.js';
import { loadCases, TESTS_FOLDER } from './case-files.js';
import { CaseModel } from './case-model.js';
import { planCases, SkillTestError, type PlannedCase, type SkillModes } from './case-plan.js';
import { engineCommand, TESTABLE_ENGINES, type UserSetup } from './engine-command.js';
import { makeClaudeHome, makeCodexHome, makeGeminiHome, type EngineHome } from './engine-homes.js';
import { startModelServer, type ModelServer } from './model-server.js';
import { startDaemon, stopDaemon } from './private-daemon.js';
import { runCase, ScriptedModelRefused, type CaseResult } from './run-case.js';
import { makeTempFolder, removeFolder, stopProcessesIn } from './temp-folder.js';

/** What `skills test` runs. */
export interface SkillTestRun {
  /** The skill's folder. */
  skillDir: string;
  engine: string | null;
  caseName: string | null;
  /** Keep what the run leaves: the private daemon's folder (its log, the run folders), or the jobs on a daemon of the user's. */
  keep: boolean;
  /** The socket of the user's daemon, tried first; null: a private daemon at once (`--private`). */
  socket: string | null;
  /** The user's configuration (each engine's command), read when first asked: a private daemon needs it, a running one does not. */
  setup(): Promise<UserSetup>;
  /** Told of each case as it ends. */
  onCase(result: CaseResult): void;
  /** Told, once, where the cases run when it is not where they were asked to (a daemon that cannot take them). */
  onNote(text: string): void;
  /** Receives the stop of everything started, at once: to run on a signal. */
  onCleanup(stop: () => Promise<void>): void;
}

/** The skill tested and each case's result, in the order they ran. */
export interface SkillTestReport {
  skillId: string;
  results: CaseResult[];
  /** The socket of the user's daemon the cases ran on, or null: a private one. */
  daemon: string | null;
  /** The private daemon's folder kept (`keep`), else null. */
  kept: string | null;
}

const HOMES = { codex: makeCodexHome, gemini: makeGeminiHome, claude: makeClaudeHome } as const;

/** Holds the case the scripted model plays while it runs. */
interface Script {
  current: CaseModel | null;
}

/**
 * Runs a skill's cases on the user's daemon when one answers at `socket` and serves the skill's
 * folder, else on a private daemon in a temp folder. Everything started is stopped at the end,
 * after a failure too.
 */
export async function runSkillTests(run: SkillTestRun): Promise<SkillTestReport> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  run.onCleanup(stopAll);
  try {
    const client = run.socket === null ? null : await RpcClient.connect(run.socket).catch(() => null);
    if (client !== null && run.socket !== null) {
      stops.push(async () => client.close());
      const served = await servedSkill(client, run.skillDir);
      const refused = typeof served === 'string' ? served : await onRunningDaemon(run, run.socket, client, served, stops);
      if (typeof refused !== 'string') return refused;
      run.onNote(`the daemon at ${run.socket} ${refused}: the cases run on a private daemon`);
    }
    return await onPrivateDaemon(run, stops);
  } finally {
    await stopAll();
  }
}

/** What of a skill decides its cases' jobs: its id, modes, engines and the inputs that name paths. */
type SkillFacts = SkillModes & { id: string; input_paths: Record<string, unknown> };

/** The daemon's view of the skill when it serves it from this very folder; else why it cannot run its cases. */
async function servedSkill(client: RpcClient, skillDir: string): Promise<SkillView | string> {
  const skill = await client.request<SkillView>('skills/get', { skill_id: basename(skillDir) }).catch(() => null);
  if (skill === null) return `has no skill ${basename(skillDir)}`;
  const path = typeof skill['path'] === 'string' ? skill['path'] : '';
  const same = await Promise.all([realpath(path), realpath(skillDir)]).then(([a, b]) => a === b).catch(() => false);
  if (!same) return `serves ${basename(skillDir)} from another folder (${path})`;
  // A daemon older than input_paths in its view: the skill is read here instead (a private daemon's way).
  return typeof skill['input_paths'] === 'object' && skill['input_paths'] !== null ? skill : 'does not say which inputs of a skill name paths (an older daemon)';
}

/**
 * The cases as test jobs of the user's daemon (`scripted_model`, docs/skills.md): the scripted
 * model server here, each job's engine pointed at it by the daemon, with a home of the job's own.
 * The jobs are removed after (kept with `keep`). A string: why the daemon took none of them.
 */
async function onRunningDaemon(run: SkillTestRun, socket: string, client: RpcClient, served: SkillView, stops: Array<() => Promise<void>>): Promise<SkillTestReport | string> {
  // The daemon's view of the skill, not the daemon's skill loader (its schema compiler: ~150 ms to load): the daemon has read the folder.
  if (served.status !== 'ok') throw new SkillTestError(`the skill is invalid: ${served.error?.code ?? 'SKILL_INVALID'}: ${served.error?.message ?? 'see skillctl skills show'}`);
  const script: Script = { current: null };
  // The three at once: each waits on something else (a port, the skill's files, the daemon).
  const [server, { skill, planned }, { engines }] = await Promise.all([
    scriptedServer(script, stops),
    planFor(run, { id: served.id, execution_modes: served.execution_modes as SkillModes['execution_modes'], effective_engines: served.effective_engines, input_paths: served['input_paths'] as Record<string, unknown> }),
    client.request<{ engines: EngineView[] }>('engines/list'),
  ]);
  for (const engine of new Set(planned.map((p) => p.engine))) {
    const found = engines.find((e) => e.name === engine);
    if (found !== undefined && !canRun(found)) throw new SkillTestError(`the daemon at ${socket} cannot run ${engine}: ${found.reason ?? 'its command does not start'}`);
  }
  // Removed at the end, after a failure and on Ctrl-C too (one still running is canceled first).
  const made: string[] = [];
  if (!run.keep) stops.push(() => removeJobs(client, made));
  try {
    const results = await runCases(client, skill.id, planned, script, server.url, run.onCase, (jobId) => made.push(jobId));
    return { skillId: skill.id, results, daemon: socket, kept: null };
  } catch (error) {
    if (error instanceof ScriptedModelRefused) return error.message;
    throw error;
  }
}

/**
 * The cases on a private daemon in a temp folder: a copy of the skill, a home for each engine
 * pointed at the scripted model server. The daemon is started first, and the skill and its cases
 * are read while it starts: its start is most of what a short run waits for. The folder is
 * removed at the end (kept with `keep`).
 */
async function onPrivateDaemon(run: SkillTestRun, stops: Array<() => Promise<void>>): Promise<SkillTestReport> {
  const dir = await makeTempFolder('skilld-skills-test-');
  // Kept, the folder outlives the daemon, but no process of it does.
  stops.push(async () => (run.keep ? stopProcessesIn(dir) : removeFolder(dir)));
  // The daemon names a skill by its folder's name, as skills validate does.
  await cp(run.skillDir, join(dir, 'skills', basename(run.skillDir)), { recursive: true, verbatimSymlinks: true });
  const script: Script = { current: null };
  const server = await scriptedServer(script, stops);
  const setup = await run.setup();
  const found = TESTABLE_ENGINES.flatMap((engine) => {
    const command = engineCommand(engine, setup);
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
  const results = await runCases(client, skill.id, planned, script, null, run.onCase);
  return { skillId: skill.id, results, daemon: null, kept: run.keep ? dir : null };
}

/** The scripted model server, playing the case `script` holds; closed with the run's other stops. */
async function scriptedServer(script: Script, stops: Array<() => Promise<void>>): Promise<ModelServer> {
  const server = await startModelServer({ script: (request) => script.current?.reply(request) ?? { text: 'No test case is running.' }, onUnknown: () => undefined });
  stops.push(() => server.close());
  return server;
}

/** Every planned case, one after the other, the scripted model playing each in turn. */
async function runCases(client: RpcClient, skillId: string, planned: readonly PlannedCase[], script: Script, scriptedModel: string | null, onCase: (result: CaseResult) => void, onCreated?: (jobId: string) => void): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const one of planned) {
    script.current = new CaseModel(one.testCase);
    const result = await runCase(client, skillId, one, script.current, scriptedModel, onCreated);
    results.push(result);
    onCase(result);
  }
  return results;
}

/** The test jobs, removed from the user's daemon (`force`: one still running is canceled first). */
async function removeJobs(client: RpcClient, ids: readonly string[]): Promise<void> {
  for (let at = 0; at < ids.length; at += 100) await client.request('jobs/remove', { job_ids: ids.slice(at, at + 100), force: true });
}

/** The skill as the daemon loads it, and its cases planned: the ones chosen, each with its engine and mode. */
async function readSkill(run: SkillTestRun): Promise<{ skill: SkillFacts; planned: PlannedCase[] }> {
  const { SkillLoadError, loadSkill } = await import('../../daemon/skills/manifest.js');
  const skill = await loadSkill(run.skillDir).catch((error: unknown) => {
    throw error instanceof SkillLoadError ? new SkillTestError(`the skill is invalid: ${error.code}: ${error.message} (${error.path})`) : error;
  });
  return planFor(run, skill);
}

/** The chosen cases of the skill's folder, each with its engine and mode. */
async function planFor(run: SkillTestRun, skill: SkillFacts): Promise<{ skill: SkillFacts; planned: PlannedCase[] }> {
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
