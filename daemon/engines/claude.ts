import { claudeStreamJson } from './claude/stream-json.js';
import { ClaudeCalls, assistantText, resultError } from './claude/events.js';
import { parseObject } from './json-text.js';
import { addUsage } from '../model/usage.js';
import { JsonEventParser } from './event-parser.js';
import { modelArgs, sessionIdOf, type AgentText, type EngineAdapter } from './engine.js';
import { claudeErrorFields } from './provider-errors.js';

/** What every one-shot turn runs with: print mode, stream-json events, and tools run unasked (as Codex `--yolo`). */
const ONE_SHOT = ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];

/** `--` keeps a prompt such as `--help me` from being read as an option; without a prompt, the CLI reads it from stdin. */
function promptArgs(prompt: string | null): string[] {
  return prompt === null ? [] : ['--', prompt];
}

/** `claude -p --output-format stream-json --verbose`: NDJSON events on stdout, ending with a `result` event. */
export const claude: EngineAdapter = {
  name: 'claude',
  startArgs: (prompt, model) => [...ONE_SHOT, ...modelArgs(model), ...promptArgs(prompt)],
  // `--resume` takes an optional value: the `=` form binds the id to it, whatever follows.
  resumeArgs: (sessionId, prompt, model) => [...ONE_SHOT, `--resume=${sessionId}`, ...modelArgs(model), ...promptArgs(prompt)],
  // Claude Code 2.1 reads a piped stdin to EOF (after the argument, if any) and refuses an empty
  // prompt (exit 1); its only bound is the model's context ("Prompt is too long", an error result).
  prompt: { maxChars: null, stdinMaxBytes: Number.POSITIVE_INFINITY, emptyOk: false, argvReserved: [] },
  newParser: () => new ClaudeParser(),
  agentText: claudeAgentText,
  env: {},
  probe: { helpHint: '--resume', resumeCheckArgs: ['--resume=probe-session', '--help'] },
  live: claudeStreamJson,
};

/** Claude Code's words: the text blocks of an `assistant` event (one-shot and live stream-json alike); a tool call alone says nothing. */
export function claudeAgentText(line: string): AgentText | null {
  const event = parseObject(line);
  const text = event?.['type'] === 'assistant' ? assistantText(event) : null;
  return text === null ? null : { text, piece: false };
}

/** Reads Claude Code's stream-json events (one-shot and live alike). */
export class ClaudeParser extends JsonEventParser {
  readonly #calls = new ClaudeCalls();

  protected event(event: Record<string, unknown>): 'turn_ended' | undefined {
    switch (event['type']) {
      case 'system':
        if (event['subtype'] === 'init') this.turn.sessionId ??= sessionIdOf(event['session_id']);
        return undefined;
      case 'assistant': {
        this.#calls.assistant(event);
        const text = assistantText(event);
        if (text !== null) this.turn.messages.push(text);
        return undefined;
      }
      case 'result': {
        this.turn.engineError = resultError(event);
        // Each result counts its own turn's calls: several in one output add up.
        const usage = this.#calls.result(event);
        if (usage !== null) this.turn.usage = addUsage(this.turn.usage, usage);
        this.fields = this.turn.engineError === null ? null : claudeErrorFields(event);
        return 'turn_ended';
      }
      default:
        return undefined;
    }
  }
}
