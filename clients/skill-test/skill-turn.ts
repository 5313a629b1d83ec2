import type { ModelReply } from './model-replies.js';
import type { ConversationEntry, ModelRequest } from './model-request.js';

/**
 * What a scripted model knows at one request of a skill run: the skill and its values from the
 * first-turn prompt (daemon/model/prompt.ts), the commands it ran with their output, the questions
 * it asked with the replies to them, and how many times it has answered so far. Every turn of a
 * run (a resumed one too) carries the whole conversation, so this is rebuilt from each request alone.
 */
export interface SkillTurn {
  /** The skill's id, or '' when the skill replaces the daemon's first sentence with a prompt template of its own. */
  skillId: string;
  /** The run's patched SKILL.md, or '' as for `skillId`. */
  skillMdPath: string;
  input: Record<string, unknown>;
  parameter: Record<string, unknown>;
  /** Each command the model asked for, with what it printed (null while it has not reported back). */
  commands: Array<{ command: string; output: string | null }>;
  /** The model's earlier messages after the first prompt: the questions it asked. */
  questions: string[];
  /** The user's messages after the questions, in order: the replies. */
  replies: string[];
  /** The model's answers so far in this run, each message and each tool call one: the index of the answer asked for now. */
  answered: number;
}

const FIRST_TURN = /^Run the skill "([^"]+)" \(version [^)]*\)\. Read (.+) and follow its instructions exactly\.$/m;
/** Every first-turn prompt lists its values under these headings, a skill's own template or not. */
const VALUE_HEADINGS = /\n\nInputs:\n[\s\S]*\n\nParameters:\n/;

/** The turn of a skill run a request belongs to, or null when it carries no first-turn prompt of the daemon's. */
export function readTurn(request: ModelRequest): SkillTurn | null {
  const start = request.conversation.findIndex((entry) => entry.role === 'user' && (FIRST_TURN.test(entry.text) || VALUE_HEADINGS.test(entry.text)));
  const first = request.conversation[start];
  if (first === undefined || first.role !== 'user') return null;
  const [, skillId = '', skillMdPath = ''] = FIRST_TURN.exec(first.text) ?? [];
  const input = valuesAfter(first.text, 'Inputs:');
  const turn: SkillTurn = { skillId, skillMdPath, input, parameter: valuesAfter(first.text, 'Parameters:'), commands: [], questions: [], replies: [], answered: 0 };
  for (const entry of request.conversation.slice(start + 1)) addEntry(turn, entry);
  return turn;
}

function addEntry(turn: SkillTurn, entry: ConversationEntry): void {
  if (entry.role === 'tool_call') {
    turn.commands.push({ command: commandOf(entry.args), output: null });
    turn.answered += 1;
  } else if (entry.role === 'tool_result') {
    const open = turn.commands.find((c) => c.output === null);
    if (open !== undefined) open.output = commandOutput(entry.output);
  } else if (entry.role === 'assistant') {
    turn.questions.push(entry.text);
    turn.answered += 1;
  }
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

/** The command of a shell tool call: Codex's `cmd`, Gemini's and Claude Code's `command`. */
function commandOf(args: unknown): string {
  const record = (args ?? {}) as { cmd?: unknown; command?: unknown };
  if (typeof record.cmd === 'string') return record.cmd;
  return typeof record.command === 'string' ? record.command : JSON.stringify(args);
}

/** What the command printed: Codex reports it after a few header lines and `Output:`. */
function commandOutput(report: string): string {
  const at = report.indexOf('\nOutput:\n');
  return at === -1 ? report : report.slice(at + '\nOutput:\n'.length);
}

/** A final message: a sentence, then the result as a fenced JSON block with the done marker. */
export function finalAnswer(sentence: string, output: Record<string, unknown>): ModelReply {
  return { text: `${sentence}\n\n\`\`\`json\n${JSON.stringify({ ...output, __SKILL_DONE__: true }, null, 2)}\n\`\`\`` };
}

/** The kinds of question the daemon's hint block names (daemon/model/prompt.ts). */
export type QuestionKind = 'open_text' | 'choose_one' | 'confirm';

/** A question with the daemon's optional hint block (daemon/model/prompt.ts) describing it; the kind is `choose_one` with options, else `open_text`, unless given. */
export function question(intro: string, prompt: string, options: ReadonlyArray<{ label: string; value: string }> = [], kind?: QuestionKind): ModelReply {
  const hint = ['<ASK_USER_YAML>', `prompt: ${JSON.stringify(prompt)}`, `kind: ${kind ?? (options.length === 0 ? 'open_text' : 'choose_one')}`];
  if (options.length > 0) hint.push('options:', ...options.flatMap((o) => [`  - label: ${JSON.stringify(o.label)}`, `    value: ${JSON.stringify(o.value)}`]));
  hint.push('</ASK_USER_YAML>');
  return { text: `${intro === '' ? '' : `${intro}\n\n`}${prompt}\n\n${hint.join('\n')}` };
}
