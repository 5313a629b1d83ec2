import { ENGINE_NAMES } from '../../daemon/model/job.js';
import type { CaseMode, TestCase } from './case-file.js';
import { IFLOW_NOT_TESTABLE, TESTABLE_ENGINES, type TestableEngine } from './engine-command.js';

/** A case with the engine and the mode its job runs in. */
export interface PlannedCase {
  testCase: TestCase;
  engine: TestableEngine;
  mode: CaseMode;
}

/** What `skills test` was asked that cannot be done; `usage` when the command line is at fault. */
export class SkillTestError extends Error {
  override readonly name = 'SkillTestError';
  readonly usage: boolean;

  constructor(message: string, usage = false) {
    super(message);
    this.usage = usage;
  }
}

/** The part of a skill that decides where its cases run. */
export interface SkillModes {
  execution_modes: readonly CaseMode[];
  effective_engines: readonly string[];
}

/**
 * Each case's engine and mode. The engine: `--engine` for every case, else the case's own, else
 * the first engine of the skill that `skills test` drives. The mode: the case's, else the skill's
 * only one, else interactive when the case asks and auto when it does not.
 */
export function planCases(cases: readonly TestCase[], skill: SkillModes, engineFlag: string | null): PlannedCase[] {
  if (engineFlag !== null) checkEngine(engineFlag, skill, '--engine', true);
  return cases.map((testCase) => {
    const engine = engineFlag ?? testCase.engine ?? TESTABLE_ENGINES.find((e) => skill.effective_engines.includes(e));
    if (engine === undefined) throw new SkillTestError(`${testCase.file}: the skill runs on ${skill.effective_engines.join(', ')} only, and ${IFLOW_NOT_TESTABLE}`);
    if (engineFlag === null) checkEngine(engine, skill, `${testCase.file}: engine`, false);
    const asks = testCase.model.some((turn) => 'ask' in turn);
    const only = skill.execution_modes.length === 1 ? skill.execution_modes[0] : undefined;
    const mode = testCase.mode ?? only ?? (asks ? 'interactive' : 'auto');
    if (!skill.execution_modes.includes(mode)) throw new SkillTestError(`${testCase.file}: mode "${mode}" is not one of the skill's (${skill.execution_modes.join(', ')})`);
    if (mode === 'auto' && asks) throw new SkillTestError(`${testCase.file}: model asks in an auto run, where nobody answers (the skill runs ${mode} only)`);
    return { testCase, engine: engine as TestableEngine, mode };
  });
}

function checkEngine(engine: string, skill: SkillModes, where: string, usage: boolean): void {
  if (engine === 'iflow') throw new SkillTestError(`${where}: ${IFLOW_NOT_TESTABLE}`, usage);
  if (!ENGINE_NAMES.includes(engine as (typeof ENGINE_NAMES)[number])) throw new SkillTestError(`${where}: "${engine}" is not an engine (${TESTABLE_ENGINES.join(', ')})`, usage);
  if (!skill.effective_engines.includes(engine)) throw new SkillTestError(`${where}: the skill does not run on ${engine} (its engines: ${skill.effective_engines.join(', ')})`, usage);
}
