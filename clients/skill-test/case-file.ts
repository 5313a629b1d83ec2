import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** YAML's parser, loaded at the first YAML case (most cases are JSON; it takes ~25 ms to load). */
const parseYaml = (text: string): unknown => (require('yaml') as typeof import('yaml')).parse(text);

/**
 * One test case of a skill (`<skill>/tests/<case>.json`, or `.yaml`): the request, what the
 * scripted model does at each of its turns, the replies to its questions, and what the job must
 * end with (docs/skills.md, "Testing a skill"). Parsing checks the shape, and each error names the
 * file and the field.
 */
export interface TestCase {
  /** The file it came from. */
  file: string;
  name: string;
  input: Record<string, unknown>;
  parameters: Record<string, unknown>;
  mode: CaseMode | null;
  engine: string | null;
  model: ModelTurn[];
  replies: unknown[];
  expect: Expectation;
}

export const CASE_MODES = ['auto', 'interactive'] as const;
export type CaseMode = (typeof CASE_MODES)[number];

/** What the model does at one of its turns: each answer it gives the engine, in order. */
export type ModelTurn = { say: string } | { run: string } | { ask: Ask } | { final: Record<string, unknown> };

export const ASK_KINDS = ['open_text', 'choose_one', 'confirm'] as const;
export interface Ask {
  kind: (typeof ASK_KINDS)[number];
  prompt: string;
  options: Array<{ label: string; value: string }>;
}

export const END_STATUSES = ['succeeded', 'failed', 'waiting_user'] as const;
export interface Expectation {
  status: (typeof END_STATUSES)[number];
  /** Each field given must be in the output with this value (objects: the fields given; arrays and the rest: equal). */
  output?: Record<string, unknown>;
  error_code?: string;
  /** Files that must be in the job's artifacts, as paths below its artifacts folder. */
  artifacts?: string[];
}

/** A case file that is not a case: the message names the file and the field at fault. */
export class CaseFileError extends Error {
  override readonly name = 'CaseFileError';
  readonly file: string;
  readonly field: string;

  constructor(file: string, field: string, problem: string) {
    super(`${file}: ${field === '' ? '' : `${field} `}${problem}`);
    this.file = file;
    this.field = field;
  }
}

const CASE_KEYS = ['name', 'input', 'parameters', 'mode', 'engine', 'model', 'replies', 'expect'];
const TURN_KINDS = ['say', 'run', 'ask', 'final'];
const EXPECT_KEYS = ['status', 'output', 'error_code', 'artifacts'];

/** True for the file names a skill's `tests/` folder holds cases in. */
export function isCaseFile(name: string): boolean {
  return /\.(json|ya?ml)$/.test(name);
}

/** Parses a case from its text; `file` (as shown in errors) says by its extension whether it is YAML. */
export function parseCase(text: string, file: string): TestCase {
  let data: unknown;
  try {
    data = /\.ya?ml$/.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new CaseFileError(file, '', `is not valid ${/\.ya?ml$/.test(file) ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
  const fail = (field: string, problem: string): never => {
    throw new CaseFileError(file, field, problem);
  };
  const raw = record(data, '', fail, 'the file must hold one object');
  unknownKeys(raw, CASE_KEYS, '', fail);
  const name = raw['name'];
  if (typeof name !== 'string' || name.trim() === '') fail('name', 'must be a non-empty string');
  const mode = raw['mode'] ?? null;
  if (mode !== null && !CASE_MODES.includes(mode as CaseMode)) fail('mode', `must be one of ${CASE_MODES.join(', ')}`);
  const engine = raw['engine'] ?? null;
  if (engine !== null && (typeof engine !== 'string' || engine === '')) fail('engine', 'must be an engine name');
  const model = raw['model'];
  if (!Array.isArray(model) || model.length === 0) fail('model', 'must be a list of turns, at least one');
  const turns = (model as unknown[]).map((turn, i) => parseTurn(turn, `model[${i}]`, fail));
  if (mode === 'auto' && turns.some((turn) => 'ask' in turn)) fail('model', 'asks in an auto run, where nobody answers: make the mode interactive');
  const replies = raw['replies'] ?? [];
  if (!Array.isArray(replies)) fail('replies', 'must be a list');
  return {
    file,
    name: name as string,
    input: record(raw['input'] ?? {}, 'input', fail),
    parameters: record(raw['parameters'] ?? {}, 'parameters', fail),
    mode: mode as CaseMode | null,
    engine: engine as string | null,
    model: turns,
    replies: replies as unknown[],
    expect: parseExpect(raw['expect'], fail),
  };
}

type Fail = (field: string, problem: string) => never;

function parseTurn(value: unknown, field: string, fail: Fail): ModelTurn {
  const turn = record(value, field, fail, `must be an object with one of ${TURN_KINDS.join(', ')}`);
  const keys = Object.keys(turn);
  if (keys.length !== 1 || !TURN_KINDS.includes(keys[0] as string)) fail(field, `must have exactly one of ${TURN_KINDS.join(', ')} (it has ${keys.length === 0 ? 'none' : keys.join(', ')})`);
  if ('say' in turn) return { say: text(turn['say'], `${field}.say`, fail) };
  if ('run' in turn) return { run: text(turn['run'], `${field}.run`, fail) };
  if ('final' in turn) return { final: record(turn['final'], `${field}.final`, fail, 'must be an object: the output') };
  return { ask: parseAsk(turn['ask'], `${field}.ask`, fail) };
}

function parseAsk(value: unknown, field: string, fail: Fail): Ask {
  const ask = record(value, field, fail);
  unknownKeys(ask, ['kind', 'prompt', 'options'], field, fail);
  const kind = ask['kind'] ?? 'open_text';
  if (!ASK_KINDS.includes(kind as Ask['kind'])) fail(`${field}.kind`, `must be one of ${ASK_KINDS.join(', ')}`);
  const options = ask['options'] ?? [];
  if (!Array.isArray(options)) fail(`${field}.options`, 'must be a list of {label, value}');
  const parsed = (options as unknown[]).map((option, i) => {
    const o = record(option, `${field}.options[${i}]`, fail);
    return { label: text(o['label'], `${field}.options[${i}].label`, fail), value: text(o['value'], `${field}.options[${i}].value`, fail) };
  });
  if (kind === 'choose_one' && parsed.length === 0) fail(`${field}.options`, 'must list the choices of a choose_one question');
  return { kind: kind as Ask['kind'], prompt: text(ask['prompt'], `${field}.prompt`, fail), options: parsed };
}

function parseExpect(value: unknown, fail: Fail): Expectation {
  const expect = record(value, 'expect', fail, 'must be an object with at least status');
  unknownKeys(expect, EXPECT_KEYS, 'expect', fail);
  const status = expect['status'];
  if (!END_STATUSES.includes(status as Expectation['status'])) fail('expect.status', `must be one of ${END_STATUSES.join(', ')}`);
  const parsed: Expectation = { status: status as Expectation['status'] };
  if (expect['output'] !== undefined) parsed.output = record(expect['output'], 'expect.output', fail);
  if (expect['error_code'] !== undefined) parsed.error_code = text(expect['error_code'], 'expect.error_code', fail);
  if (expect['artifacts'] !== undefined) {
    const artifacts = expect['artifacts'];
    if (!Array.isArray(artifacts)) fail('expect.artifacts', 'must be a list of file names');
    parsed.artifacts = (artifacts as unknown[]).map((a, i) => text(a, `expect.artifacts[${i}]`, fail));
  }
  return parsed;
}

function record(value: unknown, field: string, fail: Fail, problem = 'must be an object'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(field, problem);
  return value as Record<string, unknown>;
}

function text(value: unknown, field: string, fail: Fail): string {
  if (typeof value !== 'string' || value === '') fail(field, 'must be a non-empty string');
  return value as string;
}

function unknownKeys(value: Record<string, unknown>, known: readonly string[], field: string, fail: Fail): void {
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined) fail(field === '' ? unknown : `${field}.${unknown}`, `is not a field (the fields: ${known.join(', ')})`);
}
