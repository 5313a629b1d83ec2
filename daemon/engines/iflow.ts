import { acpAgentText, isAcpMessage } from './acp/agent-text.js';
import { iflowAcp } from './acp/protocols.js';
import { addUsage, type Usage } from '../model/usage.js';
import { parseObject } from './json-text.js';
import { promptFlag, sessionIdOf, type AgentText, type EngineAdapter, type ParsedTurn, type TurnParser } from './engine.js';
import { countsOf, fieldsOf, isPresent, reportedUsage } from './reported-usage.js';

const INFO_OPEN = '<Execution Info>';
const INFO_CLOSE = '</Execution Info>';

/** `iflow --prompt`: the answer as text, then an `<Execution Info>` JSON block on stdout or stderr. */
export const iflow: EngineAdapter = {
  name: 'iflow',
  startArgs: (prompt) => ['--yolo', '--thinking', ...promptFlag(prompt)],
  // Session ids are checked (`sessionIdOf`) and never start with `-`; `--resume=` is unverified with the real CLI.
  resumeArgs: (sessionId, prompt) => ['--resume', sessionId, '--yolo', '--thinking', ...promptFlag(prompt)],
  // How the real CLI reads stdin is unverified: prompts go as an argument only; an empty one is
  // assumed to fail as it does for Gemini, which iFlow derives from.
  prompt: { maxChars: null, stdinMaxBytes: null, emptyOk: false, argvReserved: [] },
  newParser: () => new IflowParser(),
  agentText: iflowAgentText,
  env: {},
  probe: { helpHint: '--resume', resumeCheckArgs: ['--resume', 'probe-session', '--help'] },
  live: iflowAcp,
};

/**
 * iFlow's words: in a one-shot turn, the answer it prints as plain text, each line a piece of one
 * message, up to its `<Execution Info>` block (on stdout, the block's lines say nothing); in a
 * live session, the ACP message chunks.
 */
export function iflowAgentText(line: string): AgentText | null {
  const message = parseObject(line);
  if (isAcpMessage(message)) return acpAgentText(message);
  const open = line.indexOf(INFO_OPEN);
  if (open === -1) return line.includes(INFO_CLOSE) ? null : { text: `${line}\n`, piece: true };
  const before = line.slice(0, open);
  const quiet = line.includes(INFO_CLOSE, open) ? {} : { quietUntil: INFO_CLOSE };
  return { text: before.trim() === '' ? '' : `${before}\n`, piece: true, ...quiet };
}

class IflowParser implements TurnParser {
  readonly #text: string[] = [];
  readonly #info: Record<'stdout' | 'stderr', string[] | null> = { stdout: null, stderr: null };
  #sessionId: string | null = null;
  #usage: Usage | null = null;
  #ended = false;

  get turnEnded(): boolean {
    return this.#ended;
  }

  line(stream: 'stdout' | 'stderr', text: string): void {
    const open = this.#info[stream];
    if (open !== null) {
      if (text.includes(INFO_CLOSE)) this.#closeInfo(stream, [...open, text.slice(0, text.indexOf(INFO_CLOSE))]);
      else open.push(text);
      return;
    }
    const start = text.indexOf(INFO_OPEN);
    if (start !== -1) {
      if (stream === 'stdout' && start > 0) this.#text.push(text.slice(0, start));
      const rest = text.slice(start + INFO_OPEN.length);
      if (rest.includes(INFO_CLOSE)) this.#closeInfo(stream, [rest.slice(0, rest.indexOf(INFO_CLOSE))]);
      else this.#info[stream] = [rest];
      return;
    }
    if (stream === 'stdout') this.#text.push(text);
  }

  result(): ParsedTurn {
    const text = this.#text.join('\n').trim();
    return { sessionId: this.#sessionId, messages: text === '' ? [] : [text], engineError: null, usage: this.#usage, usageSpan: 'turn' };
  }

  #closeInfo(stream: 'stdout' | 'stderr', lines: string[]): void {
    this.#info[stream] = null;
    this.#ended = true;
    const info = parseObject(lines.join('\n'));
    this.#sessionId = sessionIdOf(info?.['session-id']) ?? this.#sessionId;
    const usage = infoUsage(info ?? {});
    if (usage !== null) this.#usage = addUsage(this.#usage, usage);
  }
}

/**
 * What an `<Execution Info>` block says the run used: `tokenUsage` `{input, output, total}` and
 * `assistantRounds`, the model's answers, counted as its calls. Whether its input counts cached
 * tokens is not known (it says nothing of a cache): none are counted as cached.
 */
function infoUsage(info: Record<string, unknown>): Usage | null {
  if (!isPresent(info['tokenUsage'])) return null;
  const tokens = fieldsOf(info['tokenUsage']);
  const rounds = countsOf(info, 'assistantRounds');
  return reportedUsage(countsOf(tokens, 'input'), countsOf(tokens, 'output'), 0, rounds > 0 ? rounds : null);
}
