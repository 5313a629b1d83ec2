import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { flagOpt, stringOpt, UsageError } from './args.js';
import type { Command, Context } from './command.js';
import { EXIT } from './exit-codes.js';
import { cell, errorText, json, keyValues, table } from './format.js';
import { socketPath } from './socket-path.js';
import { terminalText } from './terminal-text.js';
import type { CodedError, SkillView } from './wire.js';

/** `skills [show <id> | validate <dir> | new <id> | test <skill>]`: skills/list, skills/get, or a skill folder checked, made or tested here, without the daemon. */
export const skillsCommand: Command = {
  name: 'skills',
  usage: 'skills [show <id> | validate <dir> | new <id> [--dir DIR] | test <skill> [--engine ENGINE] [--case NAME] [--keep] [--private]] [-q|--quiet]',
  summary: "list the skills (invalid ones with their error), or show one; validate checks a skill folder with the daemon's rules, new writes a minimal one (both without the daemon), test runs its test cases offline, on your daemon when it serves the skill, else on a private one",
  options: {
    quiet: { type: 'boolean', short: 'q', description: 'the list: print only the ids of the skills that are ok, one a line (for scripts and completion)' },
    dir: { type: 'string', value: 'DIR', description: 'new: the folder to write the skill in (default: the current one); put it in a skills folder of the daemon to use it' },
    engine: { type: 'string', value: 'ENGINE', description: "test: run every case with this engine, codex, gemini or claude (default: the case's engine, else the skill's first of codex, gemini, claude)" },
    case: { type: 'string', value: 'NAME', description: 'test: run only the case of this name' },
    keep: { type: 'boolean', description: "test: keep what the run made: the jobs on your daemon, or the private daemon's folder (its log, each case's run folder with the engine's output and the prompt), printed; a private daemon is stopped all the same" },
    private: { type: 'boolean', description: 'test: run the cases on a private daemon in a temp folder even when your daemon serves the skill' },
  },
  positionals: [0, 2],
  argChoices: ['show', 'validate', 'new', 'test'],
  examples: [
    'skills',
    'skills show summarize-text',
    'skills show summarize-text --json  # with its input, parameter and output schemas',
    'skills validate ./my-skill  # exit 1 with the error, as the daemon would list it',
    'skills new release-notes --dir ~/.local/share/skilld/skills',
    'skills test ./release-notes  # each case of tests/ through the real engine CLI and a scripted model, offline',
    'skills test summarize-text --engine claude --case short-text',
    'skills test ./release-notes --case bad-input --keep  # then read the engine\'s output in the folder it prints',
  ],
  offline: (inv) => ['validate', 'new', 'test'].includes(inv.positionals[0] ?? ''),
  run: async (ctx, inv) => {
    if (inv.positionals.length === 0) return listSkills(ctx, flagOpt(inv.values, 'quiet'));
    const [verb, operand] = inv.positionals;
    if (inv.positionals.length !== 2 || operand === undefined) throw new UsageError(`usage: skillctl ${skillsCommand.usage}`);
    if (verb === 'validate') return validateSkill(ctx, operand);
    if (verb === 'new') return newSkill(ctx, operand, stringOpt(inv.values, 'dir') ?? '.');
    // Loaded by the one command that uses it: the model server, the engine homes, the private daemon.
    if (verb === 'test') {
      const socket = flagOpt(inv.values, 'private') ? null : socketPath(stringOpt(inv.values, 'socket'));
      return (await import('./skill-test/command.js')).testSkill(ctx, operand, { engine: stringOpt(inv.values, 'engine') ?? null, caseName: stringOpt(inv.values, 'case') ?? null, keep: flagOpt(inv.values, 'keep'), socket });
    }
    if (verb !== 'show') throw new UsageError(`usage: skillctl ${skillsCommand.usage}`);
    const skill = await ctx.client.request<SkillView>('skills/get', { skill_id: operand });
    ctx.print(ctx.json ? json(skill) : skillDetails(skill));
    return 0;
  },
};

/** The daemon's skill loader (with its schema compiler, about 15 MiB resident): loaded by the two commands that use it, not by every skillctl command. */
function manifest(): Promise<typeof import('../daemon/skills/manifest.js')> {
  return import('../daemon/skills/manifest.js');
}

/** Loads the folder as the daemon loads a skill (the id is the folder's name). */
async function validateSkill(ctx: Context, dir: string): Promise<number> {
  const folder = resolve(dir);
  const { SkillLoadError, loadSkill } = await manifest();
  try {
    const skill = await loadSkill(folder);
    const tests = await testsProblem(folder, skill);
    if (tests !== null) {
      const problem = { code: 'SKILL_TEST_INVALID', message: tests, path: join(folder, 'tests') };
      if (ctx.json) ctx.print(json({ path: folder, status: 'invalid', error: problem }));
      else ctx.warn(`skillctl: ${errorText(problem)}`);
      return EXIT.failed;
    }
    const answer = { id: skill.id, version: skill.version, path: folder, status: 'ok', warnings: skill.warnings, effective_engines: skill.effective_engines, execution_modes: skill.execution_modes };
    if (ctx.json) ctx.print(json(answer));
    else ctx.print(`${terminalText(skill.id)} ${terminalText(skill.version)}: ok (engines ${skill.effective_engines.join(', ')}; modes ${skill.execution_modes.join(', ')})`);
    for (const warning of skill.warnings) ctx.warn(`skillctl: warning: ${terminalText(warning)}`);
    return 0;
  } catch (error) {
    if (!(error instanceof SkillLoadError)) throw error;
    const problem = { code: error.code, message: error.message, path: error.path };
    if (ctx.json) ctx.print(json({ path: folder, status: 'invalid', error: problem }));
    else ctx.warn(`skillctl: ${errorText(problem)} (${terminalText(error.path)})`);
    return EXIT.failed;
  }
}

/** What is wrong with the skill's test cases (`tests/`), the file and the field named; null when nothing is. */
async function testsProblem(folder: string, skill: { execution_modes: Array<'auto' | 'interactive'>; effective_engines: string[] }): Promise<string | null> {
  const [{ loadCases }, { planCases }, { CaseFileError }] = await Promise.all([import('./skill-test/case-files.js'), import('./skill-test/case-plan.js'), import('./skill-test/case-file.js')]);
  try {
    planCases(await loadCases(folder), skill, null);
    return null;
  } catch (error) {
    if (error instanceof CaseFileError || (error instanceof Error && error.name === 'SkillTestError')) return error.message;
    throw error;
  }
}

/** Writes a minimal valid skill `<dir>/<id>`: SKILL.md and runner.json with an input and an output schema to edit. */
async function newSkill(ctx: Context, id: string, dir: string): Promise<number> {
  const { SKILL_ID_PATTERN, loadSkill } = await manifest();
  if (!SKILL_ID_PATTERN.test(id)) throw new UsageError(`a skill id must match ${SKILL_ID_PATTERN.source} (lower-case letters, digits, dots, dashes, underscores)`);
  const folder = resolve(dir, id);
  if (existsSync(folder)) throw new UsageError(`${folder} exists already: choose another id or --dir`);
  await mkdir(join(folder, 'assets'), { recursive: true });
  await mkdir(join(folder, 'tests'), { recursive: true });
  const files = skillTemplate(id);
  const { execution_modes: modes } = JSON.parse(files['assets/runner.json'] as string) as { execution_modes: Array<'auto' | 'interactive'> };
  for (const mode of modes) files[`tests/${mode}.json`] = `${JSON.stringify(caseTemplate(mode), null, 2)}\n`;
  for (const [path, text] of Object.entries(files)) await writeFile(join(folder, path), text, { flag: 'wx' });
  // What was written loads as the daemon would load it, or this is a bug.
  await loadSkill(folder);
  ctx.print(ctx.json ? json({ id, path: folder }) : `wrote ${terminalText(folder)}: edit SKILL.md, the schemas in assets/ and the cases in tests/, then skillctl skills validate ${terminalText(folder)} and skillctl skills test ${terminalText(folder)}`);
  return 0;
}

function skillTemplate(id: string): Record<string, string> {
  const text = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  return {
    'SKILL.md': `# ${id}\n\nYou receive \`text\` in the input.\n\n1. Say here, step by step, what the agent should do with it.\n2. Keep each step short and checkable.\n\nReturn a JSON object with \`result\` (string).\n`,
    'assets/runner.json': text({ id, version: '0.1.0', name: id, description: 'What this skill does, in one sentence.', execution_modes: ['auto'] }),
    'assets/input.schema.json': text({ type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1, description: 'What the skill works on.' } }, additionalProperties: false }),
    'assets/output.schema.json': text({ type: 'object', required: ['result'], properties: { result: { type: 'string', minLength: 1 } } }),
  };
}

/** A case that passes against the template skill in `mode` (docs/skills.md, "Testing a skill"): what the model does, turn by turn, and what the job must end with. */
function caseTemplate(mode: 'auto' | 'interactive'): Record<string, unknown> {
  const result = { result: 'Hello, world: a greeting, in two words.' };
  const ask = { ask: { kind: 'open_text', prompt: 'Who is the result for?' } };
  return {
    name: mode === 'auto' ? 'answers unattended' : 'asks, then answers',
    mode,
    input: { text: 'Hello, world.' },
    model: [{ run: 'echo "the agent reads its input here"' }, ...(mode === 'interactive' ? [ask] : []), { final: result }],
    ...(mode === 'interactive' ? { replies: ['For a reader in a hurry.'] } : {}),
    expect: { status: 'succeeded', output: result },
  };
}

const SKILL_FIELD_TEXT: Record<string, (value: unknown) => string> = {
  error: (value) => errorText(value as CodedError),
  warnings: (value) => (Array.isArray(value) && value.length > 0 ? terminalText(value.join('; ')) : '-'),
  schemas: (value) => {
    const present = Object.entries(value as Record<string, unknown>).filter(([, schema]) => schema !== null);
    return present.length === 0 ? '-' : `${present.map(([key]) => key).join(', ')} (--json shows them)`;
  },
  instructions: (value) => (typeof value === 'string' ? `SKILL.md, ${value.split('\n').length} lines (--json shows it)` : '-'),
};

function skillDetails(skill: SkillView): string {
  return keyValues(Object.entries(skill).map(([key, value]) => [key, (SKILL_FIELD_TEXT[key] ?? cell)(value)]));
}

async function listSkills(ctx: Context, quiet: boolean): Promise<number> {
  const answer = await ctx.client.request<{ skills: SkillView[] }>('skills/list');
  if (quiet && !ctx.json) {
    for (const skill of answer.skills) if (skill.status === 'ok') ctx.print(terminalText(skill.id));
    return 0;
  }
  if (ctx.json) {
    ctx.print(json(answer));
    return 0;
  }
  const { skills } = answer;
  const rows = skills.map((s) => [s.id, cell(s.version), s.status, cell(s.execution_modes), cell(s.effective_engines), s.error === undefined ? '' : errorText(s.error)]);
  ctx.print(skills.length === 0 ? 'no skills' : table(['ID', 'VERSION', 'STATUS', 'MODES', 'ENGINES', 'ERROR'], rows));
  for (const skill of skills) for (const warning of skill.warnings ?? []) ctx.warn(`skillctl: warning: ${skill.id}: ${terminalText(warning)}`);
  return 0;
}

