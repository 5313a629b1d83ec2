import { codexAppServer } from './codex/app-server.js';
import type { Usage } from '../model/usage.js';
import { parseObject } from './json-text.js';
import { JsonEventParser } from './event-parser.js';
import { modelArgs, sessionIdOf, type AgentText, type EngineAdapter } from './engine.js';
import { countsOf, fieldsOf, isPresent, reportedUsage } from './reported-usage.js';

/** The prompt argument that makes Codex read its prompt from stdin, to EOF. */
const FROM_STDIN = '-';

/** `codex exec --json`: NDJSON events on stdout. */
export const codex: EngineAdapter = {
  name: 'codex',
  startArgs: (prompt, model) => ['exec', '--skip-git-repo-check', '--json', '--yolo', ...modelArgs(model), '--', prompt ?? FROM_STDIN],
  // The thread id is positional and comes before the prompt (PR-8); `--` keeps a reply like `--help me` verbatim.
  resumeArgs: (sessionId, prompt, model) => ['exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', ...modelArgs(model), '--', sessionId, prompt ?? FROM_STDIN],
  // Codex 0.169 refuses a longer input ("Input exceeds the maximum length of 1048576 characters"),
  // whichever way it came; the prompt `-` itself can only be given on stdin.
  prompt: { maxChars: 1_048_576, stdinMaxBytes: Number.POSITIVE_INFINITY, emptyOk: true, argvReserved: [FROM_STDIN] },
  newParser: () => new CodexParser(),
  agentText: codexAgentText,
  env: {},
  probe: { helpHint: 'resume', resumeCheckArgs: ['exec', 'resume', '--help'] },
  live: codexAppServer,
};

/**
 * Codex's words: an `agent_message` item of `exec --json` (`item.completed`), or an
 * `agentMessage` item of `app-server` (the `item/completed` notification; its deltas and the
 * items repeated in `turn/completed` are left out, so each message counts once).
 */
export function codexAgentText(line: string): AgentText | null {
  const event = parseObject(line);
  if (event === null) return null;
  let item: unknown;
  if (event['type'] === 'item.completed') item = event['item'];
  else if (event['method'] === 'item/completed') item = (event['params'] as { item?: unknown } | undefined)?.item;
  const { type, text } = (item ?? {}) as { type?: unknown; text?: unknown };
  return (type === 'agent_message' || type === 'agentMessage') && typeof text === 'string' ? { text, piece: false } : null;
}

class CodexParser extends JsonEventParser {
  /** The `turn.completed` events seen. */
  #completed = 0;

  constructor() {
    super();
    this.turn.usageSpan = 'session';
  }

  protected event(event: Record<string, unknown>): 'turn_ended' | undefined {
    switch (event['type']) {
      case 'thread.started':
        this.turn.sessionId ??= sessionIdOf(event['thread_id']);
        return undefined;
      case 'item.completed': {
        const item = event['item'] as Record<string, unknown> | undefined;
        // Other item types (reasoning, commands, a harmless `error` item about model metadata) are not messages.
        if (item?.['type'] === 'agent_message' && typeof item['text'] === 'string') this.turn.messages.push(item['text']);
        return undefined;
      }
      case 'turn.completed':
        this.#completed += 1;
        if (isPresent(event['usage'])) this.turn.usage = execUsage(event['usage'], this.#completed);
        return 'turn_ended';
      case 'turn.failed':
        this.turn.engineError = messageOf(event['error']) ?? 'turn failed';
        return 'turn_ended';
      case 'error':
        this.turn.engineError = messageOf(event) ?? 'engine error';
        return undefined;
      default:
        return undefined;
    }
  }
}

/**
 * The `usage` of `exec --json`'s `turn.completed`: the thread's running total, as the last
 * `thread/tokenUsage/updated` of its app-server gave it (0.169: `input_tokens`, which counts the
 * cached and cache-written tokens too, `cached_input_tokens`, `cache_write_input_tokens`,
 * `output_tokens`, which counts the reasoning too, `reasoning_output_tokens`). A resumed thread's
 * total goes on from its earlier turns' (`usageSpan` `session`), and a later report in the same
 * process includes an earlier one: the latest stands, it is not added to. Exec does not count its
 * model calls: each turn it ends counts one.
 */
function execUsage(value: unknown, turns: number): Usage {
  const usage = fieldsOf(value);
  return reportedUsage(countsOf(usage, 'input_tokens'), countsOf(usage, 'output_tokens'), countsOf(usage, 'cached_input_tokens'), turns);
}

function messageOf(value: unknown): string | null {
  const message = (value as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : null;
}
