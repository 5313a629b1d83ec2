import { SkilldError } from '../../rpc/errors.js';
import type { AllowEntry } from '../base/allow-entry.js';
import type { Limits } from '../base/config-sandbox.js';
import type { EngineAdapter } from '../engines/engine.js';
import { routePrompt, type PromptRoute } from '../engines/prompt-route.js';
import { ENGINES } from '../engines/registry.js';
import { inputPaths, type InputPath } from '../sandbox/input-paths.js';
import type { SkillDefinition } from '../skills/manifest.js';
import { lastResponse, type Interaction } from '../model/interactions.js';
import type { Job, JobError } from '../model/job.js';
import { firstTurnPrompt, replyPrompt } from '../model/prompt.js';
import type { RunFolder } from '../model/run-folder.js';

/** What the next turn runs: its prompt and argv, and whether it resumes a saved session. */
export interface TurnPlan {
  prompt: string;
  argv: string[];
  /** The prompt to write to the engine's stdin, which is then closed; null when it is in `argv`. */
  stdin: string | null;
  resuming: boolean;
  /** The paths the request's input names that the skill works on (`input_paths`), for the job's sandbox. */
  paths: InputPath[];
  /** The skill's limits (runner.json), which lower the daemon's. */
  limits: Partial<Limits>;
  /** Where the skill's jobs may connect (runner.json `network.allow`), should the config let skills add to the allow-list. */
  allow: AllowEntry[];
}

/** What a job's first prompt is built from. */
export interface FirstTurnInput {
  job: Job;
  skill: Pick<SkillDefinition, 'id' | 'version' | 'prompts'>;
  folder: RunFolder;
  request: { input: Record<string, unknown>; parameter: Record<string, unknown> };
}

export interface TurnPlanInput extends FirstTurnInput {
  skill: Pick<SkillDefinition, 'id' | 'version' | 'prompts' | 'input_paths' | 'limits' | 'network_allow'>;
  adapter: EngineAdapter;
  command: readonly string[];
  history: readonly Interaction[];
}

/**
 * The first turn starts the engine with the skill prompt; every later turn resumes the stored
 * session handle with the last reply as its prompt (PR-7). The prompt goes as an argument, or on
 * stdin when it is too large for one (`routePrompt`). A job error when the turn cannot run: no
 * handle or reply to resume with, or a prompt the engine cannot be given (refused up front by
 * `checkFirstPrompt` and `checkReply`, so only a job accepted by an older version gets there).
 */
export function planTurn(p: TurnPlanInput): TurnPlan | JobError {
  const { job, adapter } = p;
  if (job.attempt === 0) return withPrompt(p, firstPrompt(p), false, (text) => adapter.startArgs(text, job.model));
  const handle = job.session_handle?.handle_value ?? null;
  const reply = lastResponse(p.history);
  if (handle === null || reply === null) return { code: 'SESSION_RESUME_FAILED', message: 'no stored session handle or reply to resume with' };
  return withPrompt(p, replyPrompt(reply.response), true, (text) => adapter.resumeArgs(handle, text, job.model));
}

/** The plan for a turn with this prompt; `args` gets the prompt, or null when it goes on stdin. */
function withPrompt(p: TurnPlanInput, prompt: string, resuming: boolean, args: (prompt: string | null) => string[]): TurnPlan | JobError {
  const route = routeFor(p.adapter, p.job, prompt);
  if (route.via === 'refused') {
    const message = `the ${resuming ? 'reply' : 'first prompt'} cannot reach ${p.job.engine}: ${route.reason}`;
    return { code: resuming ? 'SESSION_RESUME_FAILED' : 'JOB_INTERNAL_ERROR', message };
  }
  const argvPrompt = route.via === 'argv' ? prompt : null;
  const paths = inputPaths(p.skill.input_paths, p.request.input);
  return { prompt, argv: [...p.command, ...args(argvPrompt)], stdin: argvPrompt === null ? prompt : null, resuming, paths, limits: p.skill.limits, allow: p.skill.network_allow };
}

/** The first turn's prompt: the skill's template or intro, then the request's values. */
export function firstPrompt({ job, skill, folder, request }: FirstTurnInput): string {
  return firstTurnPrompt({
    skillId: skill.id,
    skillVersion: skill.version,
    skillMdPath: folder.skillMd,
    template: skill.prompts[job.engine] ?? skill.prompts['common'] ?? null,
    input: request.input,
    parameter: request.parameter,
  });
}

/** Refuses a job whose first prompt its engine cannot be given (INVALID_PARAMS), before anything is stored. */
export function checkFirstPrompt(p: FirstTurnInput): void {
  const route = routeFor(ENGINES[p.job.engine], p.job, firstPrompt(p));
  if (route.via === 'refused') throw refusal(`input and parameter make a first prompt that cannot reach ${p.job.engine}: ${route.reason}`, '', route.reason);
}

/** Refuses a reply its job's engine cannot be given (INVALID_PARAMS), before it is stored. */
export function checkReply(job: Job, response: unknown): void {
  // A sticky job's reply is a message of its live session's protocol, never an argument.
  if (job.interactive_profile?.kind === 'sticky_process') return;
  const route = routeFor(ENGINES[job.engine], job, replyPrompt(response));
  if (route.via === 'refused') throw refusal(`the response cannot reach ${job.engine}: ${route.reason}`, '/response', route.reason);
}

function routeFor(adapter: EngineAdapter, job: Job, prompt: string): PromptRoute {
  // A live session's prompts are messages of its protocol, of any size (the launcher sends them).
  if (job.interactive_profile?.kind === 'sticky_process') return { via: 'stdin' };
  return routePrompt(adapter, prompt, true);
}

function refusal(message: string, path: string, reason: string): SkilldError {
  return new SkilldError('INVALID_PARAMS', message, { details: { path, message: reason } });
}
