import type { ModelReply } from '../../clients/skill-test/model-server.js';
import type { SkillTurn } from '../../clients/skill-test/skill-turn.js';

// What a request of a skill run says, and the model's final message and question: skillctl's (`skills test`).
export { finalAnswer, question, readTurn, type SkillTurn } from '../../clients/skill-test/skill-turn.js';

/** One skill's side of the conversation: the next reply of the model. */
export type SkillScript = (turn: SkillTurn) => ModelReply;

/** The output of the first command that starts with `prefix`, or null when none has reported. */
export function outputOf(turn: SkillTurn, prefix: string): string | null {
  return turn.commands.find((c) => c.command.startsWith(prefix))?.output ?? null;
}

/** True once a command starting with `prefix` was asked for. */
export function ran(turn: SkillTurn, prefix: string): boolean {
  return turn.commands.some((c) => c.command.startsWith(prefix));
}

/** A word safe in a POSIX shell: single-quoted unless plainly safe. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** The command that reads the run's SKILL.md, as an agent does first. */
export function readSkillMd(turn: SkillTurn): string {
  return `cat ${shellWord(turn.skillMdPath)}`;
}

/** The patched SKILL.md says which mode the run is in (daemon/model/prompt.ts). */
export function isInteractive(skillMd: string | null): boolean {
  return skillMd !== null && skillMd.includes('## Runtime: interactive run');
}

/** The artifacts folder the patched SKILL.md names, or null. */
export function artifactsDir(skillMd: string | null): string | null {
  return /under `([^`]+)`/.exec(skillMd ?? '')?.[1] ?? null;
}
