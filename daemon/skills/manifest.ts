import { SHARE_ENTRY } from '../model/access.js';
import { basename, join, normalize } from 'node:path';
import { jsonProblem } from '../../rpc/json-problem.js';
import { didYouMean } from '../../rpc/nearest.js';
import { parseSkillLimits, type Limits } from '../base/config-sandbox.js';
import type { AllowEntry } from '../base/allow-entry.js';
import { allowListProblem } from '../base/config-network.js';
import { ENGINE_NAMES, type ApprovalMode, type EngineName, type ExecutionMode } from '../model/job.js';
import { compileSchema, type Validator } from './json-schema.js';
import { OutsideSkillError, readSkillFiles } from './skill-files.js';
import type { SkillFiles } from '../model/skill-snapshot.js';

export const SKILL_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const SCHEMA_KEYS = ['input', 'parameter', 'output'] as const;
export type SchemaKey = (typeof SCHEMA_KEYS)[number];

/** A skill as loaded from its folder, with compiled schemas. */
export interface SkillDefinition {
  id: string;
  version: string;
  name: string;
  description: string;
  execution_modes: ExecutionMode[];
  engines: string[] | null;
  unsupported_engines: string[];
  effective_engines: EngineName[];
  max_attempt: number | null;
  /** How the skill's tool use is treated in a live session: `ask` makes each permission request a question (runner.json `approvals`, default `auto`). */
  approvals: ApprovalMode;
  path: string;
  artifacts: Array<{ role: string; pattern: string; required: boolean }>;
  prompts: Record<string, string>;
  /** Inputs that name paths the job works on, shown in its sandbox read-only or read-write (docs/skills.md). */
  input_paths: Record<string, PathAccess>;
  /** What its jobs may use, lowering the daemon's `limits` (docs/sandbox.md, "Limits"). */
  limits: Partial<Limits>;
  /** Where its jobs may connect besides their engine's hosts (runner.json `network.allow`, docs/network.md). */
  network_allow: AllowEntry[];
  /** Who its jobs are shared with besides their owner (runner.json `share_with`, docs/access.md). */
  share_with: string[];
  schemas: Record<SchemaKey, object | null>;
  validators: Record<SchemaKey, Validator | null>;
  /** The bytes this definition was built from: a job's snapshot is written from them. */
  files: SkillFiles;
  /** What runner.json says that the daemon ignores (an unknown key), each with its nearest known key. */
  warnings: string[];
}

export type SkillErrorCode = 'SKILL_MANIFEST_INVALID' | 'SKILL_SCHEMA_INVALID' | 'SKILL_FILE_MISSING' | 'SKILL_LINK_OUTSIDE';

/** Why a skill folder could not be loaded: a stable code, a message and the file at fault. */
export class SkillLoadError extends Error {
  override readonly name = 'SkillLoadError';
  readonly code: SkillErrorCode;
  readonly path: string;

  constructor(code: SkillErrorCode, message: string, path: string) {
    super(message);
    this.code = code;
    this.path = path;
  }
}

const MANIFEST_SCHEMA = {
  type: 'object',
  required: ['id', 'version', 'execution_modes'],
  properties: {
    id: { type: 'string' },
    version: { type: 'string', minLength: 1 },
    name: { type: 'string' },
    description: { type: 'string' },
    execution_modes: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['auto', 'interactive'] } },
    engines: { type: 'array', items: { type: 'string' } },
    unsupported_engines: { type: 'array', items: { type: 'string' } },
    max_attempt: { type: 'integer', minimum: 1 },
    approvals: { enum: ['auto', 'ask'] },
    schemas: { type: 'object', additionalProperties: false, properties: { input: { type: 'string' }, parameter: { type: 'string' }, output: { type: 'string' } } },
    artifacts: { type: 'array', items: { type: 'object', required: ['role', 'pattern'], properties: { role: { type: 'string' }, pattern: { type: 'string' }, required: { type: 'boolean' } } } },
    entrypoint: { type: 'object', properties: { prompts: { type: 'object', additionalProperties: { type: 'string' } } } },
    input_paths: { type: 'object', additionalProperties: { enum: ['read_only', 'read_write'] } },
    limits: { type: 'object' },
    network: { type: 'object', additionalProperties: false, properties: { allow: { type: 'array' } } },
    share_with: { type: 'array', maxItems: 64, uniqueItems: true, items: { type: 'string', pattern: SHARE_ENTRY.source } },
  },
};
const validateManifest = compileSchema(MANIFEST_SCHEMA);

interface Manifest {
  id: string;
  version: string;
  name?: string;
  description?: string;
  execution_modes: ExecutionMode[];
  engines?: string[];
  unsupported_engines?: string[];
  max_attempt?: number;
  approvals?: ApprovalMode;
  schemas?: Partial<Record<SchemaKey, string>>;
  artifacts?: Array<{ role: string; pattern: string; required?: boolean }>;
  entrypoint?: { prompts?: Record<string, string> };
  input_paths?: Record<string, PathAccess>;
  limits?: unknown;
  network?: { allow?: unknown };
  share_with?: string[];
}

/** How a job's sandbox shows a path its input names (`input_paths` in runner.json). */
export type PathAccess = 'read_only' | 'read_write';

/** Loads and checks the skill in `dir`; its id must equal the folder name. Throws SkillLoadError. */
export async function loadSkill(dir: string, expectedId: string = basename(dir)): Promise<SkillDefinition> {
  let files: SkillFiles;
  try {
    files = await readSkillFiles(dir);
  } catch (error) {
    if (error instanceof OutsideSkillError) throw new SkillLoadError('SKILL_LINK_OUTSIDE', error.message, error.path);
    throw new SkillLoadError('SKILL_MANIFEST_INVALID', `cannot read the skill folder: ${(error as Error).message}`, dir);
  }
  const manifestPath = join(dir, 'assets', 'runner.json');
  const manifest = readJson(files, dir, join('assets', 'runner.json'), 'SKILL_MANIFEST_INVALID');
  const issues = validateManifest(manifest);
  if (issues.length > 0) throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, manifestPath);
  // Its strings reach jobs' records (the version) and engines' command lines (the prompts): no NUL, as in params.
  const nul = jsonProblem(manifest, Number.POSITIVE_INFINITY);
  if (nul !== null) throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: ${nul.path ?? ''} ${nul.message}`, manifestPath);
  const m = manifest as Manifest;
  if (m.id !== expectedId) throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: id "${m.id}" must equal the folder name "${expectedId}"`, manifestPath);
  if (!SKILL_ID_PATTERN.test(m.id)) throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: id "${m.id}" must match ${SKILL_ID_PATTERN.source}`, manifestPath);
  for (const key of ['engines', 'unsupported_engines'] as const) {
    const unknown = (m[key] ?? []).find((name) => !ENGINE_NAMES.includes(name as EngineName));
    if (unknown !== undefined) throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: ${key}: "${unknown}" is not an engine (the engines: ${ENGINE_NAMES.join(', ')})${didYouMean(unknown, ENGINE_NAMES)}`, manifestPath);
  }
  const limits = m.limits === undefined ? {} : parseSkillLimits(m.limits);
  if (typeof limits === 'string') throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: limits: ${limits}`, manifestPath);
  const allow = allowListProblem(m.network?.allow ?? []);
  if (typeof allow === 'string') throw new SkillLoadError('SKILL_MANIFEST_INVALID', `runner.json: network.allow ${allow}`, manifestPath);
  if (effectiveEngines(m.engines, m.unsupported_engines).length === 0) throw new SkillLoadError('SKILL_MANIFEST_INVALID', 'runner.json: engines less unsupported_engines leaves no engine to run it', manifestPath);
  if (m.max_attempt !== undefined && !m.execution_modes.includes('interactive')) {
    throw new SkillLoadError('SKILL_MANIFEST_INVALID', 'runner.json: max_attempt applies to interactive mode only', manifestPath);
  }
  if (!files.has('SKILL.md')) throw new SkillLoadError('SKILL_FILE_MISSING', 'SKILL.md is missing', join(dir, 'SKILL.md'));
  const schemas = { input: null, parameter: null, output: null } as SkillDefinition['schemas'];
  const validators = { input: null, parameter: null, output: null } as SkillDefinition['validators'];
  for (const key of SCHEMA_KEYS) {
    const loaded = loadSchema(files, dir, key, m.schemas?.[key]);
    if (loaded === null) continue;
    schemas[key] = loaded.schema;
    validators[key] = loaded.validator;
  }
  return {
    id: m.id,
    version: m.version,
    name: m.name ?? m.id,
    description: m.description ?? '',
    execution_modes: m.execution_modes,
    engines: m.engines ?? null,
    unsupported_engines: m.unsupported_engines ?? [],
    effective_engines: effectiveEngines(m.engines, m.unsupported_engines),
    max_attempt: m.max_attempt ?? null,
    approvals: m.approvals ?? 'auto',
    path: dir,
    artifacts: (m.artifacts ?? []).map((a) => ({ role: a.role, pattern: a.pattern, required: a.required ?? false })),
    prompts: m.entrypoint?.prompts ?? {},
    input_paths: m.input_paths ?? {},
    limits,
    network_allow: allow,
    share_with: m.share_with ?? [],
    schemas,
    validators,
    files,
    warnings: unknownKeys(manifest as Record<string, unknown>),
  };
}

/** runner.json's keys the daemon does not know: loaded all the same (a newer skill may carry more), and said as warnings. */
function unknownKeys(manifest: Record<string, unknown>): string[] {
  const known = Object.keys(MANIFEST_SCHEMA.properties);
  return Object.keys(manifest)
    .filter((key) => !known.includes(key))
    .map((key) => `runner.json: unknown key "${key}", ignored${didYouMean(key, known)}`);
}

/** `(engines ?? every known engine) − unsupported_engines`, keeping only engines the daemon knows. */
export function effectiveEngines(engines: string[] | undefined, unsupported: string[] | undefined): EngineName[] {
  const allowed = engines ?? ENGINE_NAMES;
  return ENGINE_NAMES.filter((name) => allowed.includes(name) && !(unsupported ?? []).includes(name));
}

function loadSchema(files: SkillFiles, dir: string, key: SchemaKey, declared: string | undefined): { schema: object; validator: Validator } | null {
  const rel = normalize(declared ?? join('assets', `${key}.schema.json`));
  if (declared === undefined && key !== 'output' && !files.has(rel)) return null;
  const schema = readJson(files, dir, rel, 'SKILL_SCHEMA_INVALID');
  try {
    return { schema: schema as object, validator: compileSchema(schema) };
  } catch (error) {
    throw new SkillLoadError('SKILL_SCHEMA_INVALID', `${key} schema: ${(error as Error).message}`, join(dir, rel));
  }
}

function readJson(files: SkillFiles, dir: string, rel: string, code: SkillErrorCode): unknown {
  const path = join(dir, rel);
  const bytes = files.get(rel);
  if (bytes === undefined) throw new SkillLoadError(code, `${rel} is missing`, path);
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new SkillLoadError(code, `${basename(path)} is not valid JSON: ${(error as Error).message}`, path);
  }
}
