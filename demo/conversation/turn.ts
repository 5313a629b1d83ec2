import type { ConversationEntry, ModelReply, ModelRequest } from '../../test/fixtures/model-server.js';

/**
 * What the scripted model knows at one request of a skill run: the skill and its values from the
 * first-turn prompt (daemon/model/prompt.ts), the commands it ran with their output, and the
 * questions it asked with the replies to them. Every turn of a run (a resumed one too) carries the
 * whole conversation, so this is rebuilt from each request alone.
 */
export interface SkillTurn {
  skillId: string;
  skillMdPath: string;
  input: Record<string, unknown>;
  parameter: Record<string, unknown>;
  /** Each command the model asked for, with what it printed (null while it has not reported back). */
  commands: Array<{ command: string; output: string | null }>;
  /** The model's earlier messages after the first prompt: the questions it asked. */
  questions: string[];
  /** The user's messages after the questions, in order: the replies. */
  replies: string[];
}

/** One skill's side of the conversation: the next reply of the model. */
export type SkillScript = (turn: SkillTurn) => ModelReply;

const FIRST_TURN = /^Run the skill "([^"]+)" \(version [^)]*\)\. Read (.+) and follow its instructions exactly\.$/m;

/** The turn of a skill run a request belongs to, or null when it carries no first-turn prompt of the daemon's. */
export function readTurn(request: ModelRequest): SkillTurn | null {
  const start = request.conversation.findIndex((entry) => entry.role === 'user' && FIRST_TURN.test(entry.text));
  const first = request.conversation[start];
  if (first === undefined || first.role !== 'user') return null;
  const [, skillId = '', skillMdPath = ''] = FIRST_TURN.exec(first.text) ?? [];
  const turn: SkillTurn = { skillId, skillMdPath, input: valuesAfter(first.text, 'Inputs:'), parameter: valuesAfter(first.text, 'Parameters:'), commands: [], questions: [], replies: [] };
  for (const entry of request.conversation.slice(start + 1)) addEntry(turn, entry);
  return turn;
}

function addEntry(turn: SkillTurn, entry: ConversationEntry): void {
  if (entry.role === 'tool_call') turn.commands.push({ command: commandOf(entry.args), output: null });
  else if (entry.role === 'tool_result') {
    const open = turn.commands.find((c) => c.output === null);
    if (open !== undefined) open.output = commandOutput(entry.output);
  } else if (entry.role === 'assistant') turn.questions.push(entry.text);
  // Codex repeats its environment context as user text; a reply only counts after a question.
  else if (entry.role === 'user' && turn.replies.length < turn.questions.length && !entry.text.startsWith('<')) turn.replies.push(entry.text);
}

/** The `- name: <JSON>` lines of one section of the first-turn prompt. */
function valuesAfter(prompt: string, heading: string): Record<string, unknown> {
  const lines = prompt.split('\n');
  const values: Record<string, unknown> = {};
  for (const line of lines.slice(lines.indexOf(heading) + 1)) {
    const match = /^- ([^:]+): (.*)$/.exec(line);
    if (match === null) break;
    try {
      values[match[1] as string] = JSON.parse(match[2] as string) as unknown;
    } catch {
      values[match[1] as string] = match[2];
    }
  }
  return values;
}

function commandOf(args: unknown): string {
  const cmd = (args as { cmd?: unknown } | null)?.cmd;
  return typeof cmd === 'string' ? cmd : JSON.stringify(args);
}

/** What the command printed: Codex reports it after a few header lines and `Output:`. */
function commandOutput(report: string): string {
  const at = report.indexOf('\nOutput:\n');
  return at === -1 ? report : report.slice(at + '\nOutput:\n'.length);
}

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

/** A final message: a sentence, then the result as a fenced JSON block with the done marker. */
export function finalAnswer(sentence: string, output: Record<string, unknown>): ModelReply {
  return { text: `${sentence}\n\n\`\`\`json\n${JSON.stringify({ ...output, __SKILL_DONE__: true }, null, 2)}\n\`\`\`` };
}

/** A question with the daemon's optional hint block (daemon/model/prompt.ts) describing it. */
export function question(intro: string, prompt: string, options: Array<{ label: string; value: string }> = []): ModelReply {
  const hint = ['<ASK_USER_YAML>', `prompt: ${JSON.stringify(prompt)}`, `kind: ${options.length === 0 ? 'open_text' : 'choose_one'}`];
  if (options.length > 0) hint.push('options:', ...options.flatMap((o) => [`  - label: ${JSON.stringify(o.label)}`, `    value: ${JSON.stringify(o.value)}`]));
  hint.push('</ASK_USER_YAML>');
  return { text: `${intro}\n\n${prompt}\n\n${hint.join('\n')}` };
}

/** The patched SKILL.md says which mode the run is in (daemon/model/prompt.ts). */
export function isInteractive(skillMd: string | null): boolean {
  return skillMd !== null && skillMd.includes('## Runtime: interactive run');
}

/** The artifacts folder the patched SKILL.md names, or null. */
export function artifactsDir(skillMd: string | null): string | null {
  return /under `([^`]+)`/.exec(skillMd ?? '')?.[1] ?? null;
}
