import { acpAgentText, isAcpMessage } from './acp/agent-text.js';
import { geminiAcp } from './acp/protocols.js';
import type { Usage } from '../model/usage.js';
import { parseObject } from './json-text.js';
import { modelArgs, promptFlag, sessionIdOf, type AgentText, type EngineAdapter, type ParsedTurn, type TurnParser } from './engine.js';
import { countsOf, fieldsOf, isPresent, reportedUsage } from './reported-usage.js';
import { geminiErrorFields, type ErrorFields } from './provider-errors.js';

/** `gemini --output-format json`: one JSON document on stdout at the end of the turn. */
export const gemini: EngineAdapter = {
  name: 'gemini',
  // Without `--prompt`, Gemini runs headless on what it reads from a piped stdin.
  startArgs: (prompt, model) => ['--yolo', '--output-format', 'json', ...modelArgs(model), ...promptFlag(prompt)],
  resumeArgs: (sessionId, prompt, model) => [`--resume=${sessionId}`, '--yolo', '--output-format', 'json', ...modelArgs(model), ...promptFlag(prompt)],
  // Gemini 0.61 reads at most 8 MiB from stdin (it cuts the rest) and exits 42 on an empty prompt.
  prompt: { maxChars: null, stdinMaxBytes: 8 * 1024 * 1024, emptyOk: false, argvReserved: [] },
  newParser: () => new GeminiParser(),
  agentText: geminiAgentText,
  // Without it Gemini relaunches itself in a child and ignores SIGTERM; trust spares exit 55 in new folders.
  env: { GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_CLI_TRUST_WORKSPACE: 'true' },
  probe: { helpHint: '--resume', resumeCheckArgs: ['--resume', 'probe-session', '--help'] },
  live: geminiAcp,
};

/** The document's top-level `response` member, on its own line as Gemini pretty-prints it (two spaces in; nested members are deeper). */
const RESPONSE_LINE = /^ {2}"response": ("(?:[^"\\]|\\.)*"),?\s*$/;

/**
 * Gemini's words: in a one-shot turn, the `response` of the JSON document it prints at the end
 * (found on its own line, so that each line can be read alone; a document printed on one line
 * works too); in a live session, the ACP message chunks.
 */
export function geminiAgentText(line: string): AgentText | null {
  const member = RESPONSE_LINE.exec(line)?.[1];
  if (member !== undefined) return responseOf(member);
  const message = parseObject(line);
  if (isAcpMessage(message)) return acpAgentText(message);
  const response = message?.['response'];
  return typeof response === 'string' && response !== '' ? { text: response, piece: false } : null;
}

/** The JSON string of a response member as text; null for an empty or broken one. */
function responseOf(member: string): AgentText | null {
  try {
    const text = JSON.parse(member) as string;
    return text === '' ? null : { text, piece: false };
  } catch {
    return null;
  }
}

class GeminiParser implements TurnParser {
  #lines: string[] = [];
  #document: Record<string, unknown> | null = null;

  get turnEnded(): boolean {
    return this.#document !== null;
  }

  get errorFields(): ErrorFields | null {
    const error = this.#document?.['error'];
    return typeof error === 'object' && error !== null && !Array.isArray(error) ? geminiErrorFields(error as Record<string, unknown>) : null;
  }

  line(stream: 'stdout' | 'stderr', text: string): void {
    if (stream !== 'stdout' || this.#document !== null) return;
    // Anything printed before the document (notices, warnings) is not part of it.
    if (this.#lines.length === 0 && !text.trimStart().startsWith('{')) return;
    this.#lines.push(text);
    if (text.trimEnd().endsWith('}')) this.#document = parseObject(this.#lines.join('\n'));
  }

  result(): ParsedTurn {
    const doc = this.#document;
    if (doc === null) return { sessionId: null, messages: [], engineError: null, usage: null, usageSpan: 'turn' };
    const error = doc['error'] as { message?: unknown } | undefined;
    return {
      sessionId: sessionIdOf(doc['session_id']),
      messages: typeof doc['response'] === 'string' ? [doc['response']] : [],
      engineError: error === undefined || error === null ? null : typeof error.message === 'string' ? error.message : 'engine error',
      usage: statsUsage(doc['stats']),
      usageSpan: 'turn',
    };
  }
}

/**
 * What the document's `stats` say the process's model calls used, summed over `stats.models`
 * (each model's `api.totalRequests`, failed ones included, and `tokens` as the Gemini API counts
 * them: `prompt`, cached ones included, `cached`, `tool` (the prompts of its built-in tools),
 * `candidates` (the answer) and `thoughts`, which the answer count leaves out). A one-shot resume
 * starts its stats afresh: they are this turn's. An error document has no stats.
 */
function statsUsage(stats: unknown): Usage | null {
  const models = fieldsOf(stats)['models'];
  if (!isPresent(models)) return null;
  let input = 0;
  let output = 0;
  let cached = 0;
  let requests = 0;
  for (const model of Object.values(fieldsOf(models))) {
    const tokens = fieldsOf(fieldsOf(model)['tokens']);
    input += countsOf(tokens, 'prompt', 'tool');
    output += countsOf(tokens, 'candidates', 'thoughts');
    cached += countsOf(tokens, 'cached');
    requests += countsOf(fieldsOf(fieldsOf(model)['api']), 'totalRequests');
  }
  return reportedUsage(input, output, cached, requests > 0 ? requests : null);
}
