import { tokenCount, type Usage } from '../model/usage.js';

/**
 * The usage one provider response reports, read message by message: each parsed SSE `data:`
 * payload, or the whole JSON body (each element of a JSON array, as Gemini's non-SSE
 * `:streamGenerateContent` sends). Which API spoke is told from the message itself, its `type`
 * and its fields, never from the URL: the gateway need not know which path a provider serves.
 *
 * Every API repeats figures rather than adding to them within one response (Gemini repeats the
 * running totals in each chunk; Anthropic's `message_delta` carries the output count so far after
 * `message_start` gave the input), so the latest value of each field stands and none is summed.
 */
export class ProviderUsage {
  #kind: Kind | null = null;
  #figures = new Map<string, number>();

  /** Takes what `message` reports of usage; a message of any other shape, or none, is passed over. */
  read(message: unknown): void {
    if (!isRecord(message)) return;
    // Gemini; Code Assist wraps the same response in `response`.
    const metadata = message['usageMetadata'] ?? field(message['response'], 'usageMetadata');
    if (isRecord(metadata)) return this.#take('gemini', metadata);
    const type = message['type'];
    if (type === 'message_start') return this.#take('anthropic', field(message['message'], 'usage'));
    if (type === 'message_delta' || type === 'message') return this.#take('anthropic', message['usage']);
    // Responses API events: `response.completed`, and `response.incomplete` / `response.failed`, which carry usage too.
    if (typeof type === 'string' && type.startsWith('response.')) return this.#take('responses', field(message['response'], 'usage'));
    const usage = message['usage'];
    if (isRecord(usage)) this.#take(kindOf(usage), usage);
  }

  /** The usage read, as one model call; null when no message reported any. */
  usage(): Usage | null {
    if (this.#kind === null) return null;
    const figures = this.#figures;
    const total = TOTALS[this.#kind]((name) => figures.get(name) ?? 0);
    return { ...total, cached_input_tokens: Math.min(total.cached_input_tokens, total.input_tokens), requests: 1 };
  }

  #take(kind: Kind, usage: unknown): void {
    if (!isRecord(usage)) return;
    // One response speaks one API; should another's report follow, it alone is kept rather than mixed.
    if (kind !== this.#kind) this.#figures.clear();
    this.#kind = kind;
    for (const name of FIELDS[kind]) {
      const value = name.split('.').reduce<unknown>((inner, key) => field(inner, key), usage);
      if (typeof value === 'number') this.#figures.set(name, tokenCount(value));
    }
  }
}

type Kind = 'responses' | 'chat' | 'anthropic' | 'gemini';

type Counts = Omit<Usage, 'requests'>;

/** The fields each API reports, as dotted paths inside its usage object. */
const FIELDS: Record<Kind, readonly string[]> = {
  responses: ['input_tokens', 'input_tokens_details.cached_tokens', 'output_tokens'],
  chat: ['prompt_tokens', 'prompt_tokens_details.cached_tokens', 'completion_tokens'],
  anthropic: ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'],
  gemini: ['promptTokenCount', 'cachedContentTokenCount', 'toolUsePromptTokenCount', 'candidatesTokenCount', 'thoughtsTokenCount'],
};

/**
 * Each API's figures in OpenAI's sense: input counts every token read, the cached ones included.
 * Anthropic's `input_tokens` leaves out what was written to and read from the cache, so those are
 * added back. Gemini's `promptTokenCount` already includes the cached part; the prompt of its own
 * tool calls (`toolUsePromptTokenCount`) is input it bills apart, and its thoughts are output
 * counted apart from the candidates.
 */
const TOTALS: Record<Kind, (figure: (name: string) => number) => Counts> = {
  responses: (f) => ({ input_tokens: f('input_tokens'), cached_input_tokens: f('input_tokens_details.cached_tokens'), output_tokens: f('output_tokens') }),
  chat: (f) => ({ input_tokens: f('prompt_tokens'), cached_input_tokens: f('prompt_tokens_details.cached_tokens'), output_tokens: f('completion_tokens') }),
  anthropic: (f) => ({
    input_tokens: f('input_tokens') + f('cache_creation_input_tokens') + f('cache_read_input_tokens'),
    cached_input_tokens: f('cache_read_input_tokens'),
    output_tokens: f('output_tokens'),
  }),
  gemini: (f) => ({
    input_tokens: f('promptTokenCount') + f('toolUsePromptTokenCount'),
    cached_input_tokens: f('cachedContentTokenCount'),
    output_tokens: f('candidatesTokenCount') + f('thoughtsTokenCount'),
  }),
};

/**
 * The API of a top-level `usage` that no `type` names (the bodies of the Responses and Chat
 * Completions APIs, OpenAI-compatible servers): Chat Completions counts `prompt_tokens`, Anthropic
 * names its cache fields. A usage with only `input_tokens` and `output_tokens` reads the same
 * either way, as nothing of it was cached.
 */
function kindOf(usage: Record<string, unknown>): Kind {
  if ('prompt_tokens' in usage || 'completion_tokens' in usage) return 'chat';
  if ('cache_read_input_tokens' in usage || 'cache_creation_input_tokens' in usage) return 'anthropic';
  return 'responses';
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
