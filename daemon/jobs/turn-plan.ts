import type { EngineAdapter } from '../engines/engine.js';
import type { SkillDefinition } from '../skills/manifest.js';
import { lastResponse, type Interaction } from './interactions.js';
import type { Job } from './job.js';
import { firstTurnPrompt, replyPrompt } from './prompt.js';
import type { RunFolder } from './run-folder.js';

/** What the next turn runs: its prompt and argv, and whether it resumes a saved session. */
export interface TurnPlan {
  prompt: string;
  argv: string[];
  resuming: boolean;
}

export interface TurnPlanInput {
  job: Job;
  skill: SkillDefinition;
  adapter: EngineAdapter;
  command: readonly string[];
  folder: RunFolder;
  request: { input: Record<string, unknown>; parameter: Record<string, unknown> };
  history: readonly Interaction[];
}

/**
 * The first turn starts the engine with the skill prompt; every later turn resumes the stored
 * session handle with the last reply as its prompt (PR-7). Null when a later turn has no handle
 * or no reply to send: the session cannot be resumed.
 */
export function planTurn(p: TurnPlanInput): TurnPlan | null {
  const { job, skill, adapter, command } = p;
  if (job.attempt === 0) {
    const prompt = firstTurnPrompt({
      skillId: skill.id,
      skillVersion: skill.version,
      skillMdPath: p.folder.skillMd,
      template: skill.prompts[job.engine] ?? skill.prompts['common'] ?? null,
      input: p.request.input,
      parameter: p.request.parameter,
    });
    return { prompt, argv: [...command, ...adapter.startArgs(prompt, job.model)], resuming: false };
  }
  const reply = lastResponse(p.history);
  if (job.session_handle === null || reply === null) return null;
  const prompt = replyPrompt(reply.response);
  return { prompt, argv: [...command, ...adapter.resumeArgs(job.session_handle.handle_value, prompt, job.model)], resuming: true };
}
