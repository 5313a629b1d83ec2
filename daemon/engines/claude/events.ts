// What Claude Code's stream-json events say, read the same way by one-shot turns and live sessions.

import type { Usage } from '../../model/usage.js';
import { countsOf, fieldsOf, isPresent, reportedUsage } from '../reported-usage.js';

/** The text blocks of an `assistant` event, joined; null when it has none (a tool call alone). */
export function assistantText(event: Record<string, unknown>): string | null {
  const content = (event['message'] as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((block) => {
    const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
    return type === 'text' && typeof text === 'string' ? [text] : [];
  });
  return texts.length === 0 ? null : texts.join('');
}

/** What went wrong according to a `result` event, or null for a success. */
export function resultError(event: Record<string, unknown>): string | null {
  if (event['subtype'] === 'success' && event['is_error'] !== true) return null;
  const errors = Array.isArray(event['errors']) ? event['errors'].filter((e): e is string => typeof e === 'string') : [];
  if (errors.length > 0) return errors.join('; ');
  if (typeof event['result'] === 'string' && event['result'] !== '') return event['result'];
  return `turn ended with ${String(event['subtype'] ?? 'an error')}`;
}

/**
 * A stream-json turn's model calls, and what its `result` event says they used. Claude Code
 * prints each model response as `assistant` events (one per content block) carrying the response's
 * message id, so the distinct ids are the calls that answered; the message it makes up for an API
 * error (model `<synthetic>`) is no call's. `num_turns` is not that count (an interrupted turn
 * with no answer reports 2), nor is `usage.iterations` (the sampling steps inside one API request,
 * e.g. a compaction), and `modelUsage` counts no calls; a result with tokens and no answer seen
 * (`--output-format json` prints the result alone) counts one.
 */
export class ClaudeCalls {
  readonly #ids = new Set<string>();

  /** One `assistant` event of the turn. */
  assistant(event: Record<string, unknown>): void {
    const message = fieldsOf(event['message']);
    if (typeof message['id'] === 'string' && message['model'] !== SYNTHETIC_MODEL) this.#ids.add(message['id']);
  }

  /**
   * The usage of the `result` event that ends the turn, null when it carries none; the calls seen
   * since the previous result are its own. Its `usage` is this turn's alone, a resumed session's
   * too (`modelUsage` runs from the session's start): input is every input token, those written to
   * and read from the prompt cache included, and cached the ones read.
   */
  result(event: Record<string, unknown>): Usage | null {
    const calls = this.#ids.size;
    this.#ids.clear();
    if (!isPresent(event['usage'])) return null;
    const usage = fieldsOf(event['usage']);
    const input = countsOf(usage, 'input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens');
    return reportedUsage(input, countsOf(usage, 'output_tokens'), countsOf(usage, 'cache_read_input_tokens'), calls > 0 ? calls : null);
  }
}

/** The model of the message Claude Code makes up for a failed model call. */
const SYNTHETIC_MODEL = '<synthetic>';
