import type { ModelReply, ModelRequest } from '../../clients/skill-test/model-server.js';
import { planTrip } from './plan-trip.js';
import { summarizeText } from './summarize-text.js';
import { readTurn, type SkillScript } from './turn.js';
import { writeCommitMessage } from './write-commit-message.js';

/** The scripted conversation of each bundled skill (`skills/`), by skill id. */
export const SKILL_SCRIPTS: Readonly<Record<string, SkillScript>> = {
  'summarize-text': summarizeText,
  'plan-trip': planTrip,
  'write-commit-message': writeCommitMessage,
};

/**
 * The demo's model: finds the skill a request runs (from the daemon's first-turn prompt) and
 * answers as that skill's script says. Anything else gets a plain sentence, which no output
 * schema accepts, so such a job fails with a clear OUTPUT_INVALID rather than a made-up result.
 */
export function demoModel(request: ModelRequest): ModelReply {
  const turn = readTurn(request);
  if (turn === null) return { text: 'This scripted model only runs the bundled example skills (summarize-text, plan-trip, write-commit-message).' };
  const script = SKILL_SCRIPTS[turn.skillId];
  if (script === undefined) return { text: `This scripted model has no conversation for the skill "${turn.skillId}"; it knows ${Object.keys(SKILL_SCRIPTS).join(', ')}.` };
  return script(turn);
}
