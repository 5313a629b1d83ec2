import { SkilldError } from '../../rpc/errors.js';
import { defaultEngine, defaultMode } from '../skills/defaults.js';
import type { SkillRegistry } from '../skills/registry.js';
import type { SkillDefinition } from '../skills/manifest.js';
import { isScriptable, SCRIPTABLE_ENGINES } from '../engines/scripted-homes.js';
import { ENGINE_NAMES, type ApprovalMode, type EngineName, type ExecutionMode } from '../model/job.js';

/** `jobs/create` params after shape validation by the RPC layer. */
export interface CreateParams {
  skill_id: string;
  /** Not given: `defaultEngine` chooses. */
  engine?: string;
  /** Not given: the skill's one mode, or `auto`. */
  execution_mode?: ExecutionMode;
  interactive_require_user_reply?: boolean;
  session_timeout_sec?: number;
  hard_timeout_sec?: number;
  input?: Record<string, unknown>;
  parameter?: Record<string, unknown>;
  model?: string;
  approvals?: ApprovalMode;
  /** Who else may see and act on the job (docs/access.md): `user:<name>`, `group:<name>`. */
  share_with?: string[];
  /** A test job's scripted model: `http://127.0.0.1:<port>` (docs/skills.md). */
  scripted_model?: string;
}

export interface CreatePlan {
  skill: SkillDefinition;
  engine: EngineName;
  mode: ExecutionMode;
  input: Record<string, unknown>;
  parameter: Record<string, unknown>;
  /** The scripted model's address, its trailing slash dropped; null for every job but a test job. */
  scriptedModel: string | null;
}

/** Create-time checks (docs/protocol.md, "jobs/create"), in a fixed order so the same bad request always gets the same code. */
export function planCreate(params: CreateParams, skills: SkillRegistry, configuredEngine: EngineName | null = null, shared = false): CreatePlan {
  const entry = skills.require(params.skill_id);
  const skill = entry.current;
  if (skill === null) throw new SkilldError('SKILL_INVALID', `skill "${params.skill_id}" is invalid: ${entry.error?.message ?? 'not loaded'}`, { details: entry.error });
  if (params.engine !== undefined && !ENGINE_NAMES.includes(params.engine as EngineName)) {
    throw new SkilldError('ENGINE_UNKNOWN', `unknown engine "${params.engine}"; known: ${ENGINE_NAMES.join(', ')}`);
  }
  const engine = (params.engine as EngineName | undefined) ?? defaultEngine(skill, configuredEngine);
  if (engine === null || !skill.effective_engines.includes(engine)) {
    throw new SkilldError('SKILL_ENGINE_UNSUPPORTED', `skill "${skill.id}" does not run on ${engine ?? 'any engine'}; it runs on: ${skill.effective_engines.join(', ') || 'no engine'}`, {
      details: { effective_engines: skill.effective_engines },
    });
  }
  const mode = params.execution_mode ?? defaultMode(skill.execution_modes);
  if (!skill.execution_modes.includes(mode)) {
    throw new SkilldError('SKILL_EXECUTION_MODE_UNSUPPORTED', `skill "${skill.id}" does not support ${mode} mode; it supports: ${skill.execution_modes.join(', ')}`, {
      details: { execution_modes: skill.execution_modes },
    });
  }
  const input = params.input ?? {};
  const parameter = params.parameter ?? {};
  const issues = {
    input: skill.validators.input?.(input) ?? [],
    parameter: skill.validators.parameter?.(parameter) ?? [],
  };
  if (issues.input.length > 0 || issues.parameter.length > 0) {
    const first = issues.input[0] ?? issues.parameter[0];
    throw new SkilldError('INPUT_INVALID', `${issues.input.length > 0 ? 'input' : 'parameter'} ${first?.path ?? ''} ${first?.message ?? 'is invalid'}`, { details: issues });
  }
  return { skill, engine, mode, input, parameter, scriptedModel: scriptedModel(params.scripted_model, engine, shared) };
}

/**
 * A test job's model address, checked: a port there can be, an engine that can be pointed at it,
 * and a store no other host takes jobs from (the address is this host's loopback).
 */
function scriptedModel(given: string | undefined, engine: EngineName, shared: boolean): string | null {
  if (given === undefined) return null;
  const refuse = (why: string): never => {
    throw new SkilldError('INVALID_PARAMS', `scripted_model ${JSON.stringify(given)}: ${why}`, { details: { field: 'scripted_model' } });
  };
  const url = given.replace(/\/$/, '');
  const port = Number(url.slice(url.lastIndexOf(':') + 1));
  if (!(port >= 1 && port <= 65535)) refuse('the port must be 1 to 65535');
  if (!isScriptable(engine)) refuse(`${engine} cannot be pointed at a scripted model (it has no setting for its provider's address); these can: ${SCRIPTABLE_ENGINES.join(', ')}`);
  if (shared) refuse("the store is shared with other hosts, and another host could take the job, where the address is not this host's");
  return url;
}
