import { tokenCount, type Usage } from '../model/usage.js';

// What an engine reported of its model calls, read the same way by one-shot parsers and live
// protocols. The counts come from a model's process: anything odd in them counts nothing, and
// never stops the turn from being read.

/** Whether an engine printed the member at all: a missing or null one reports nothing (null usage), an odd one counts nothing. */
export function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The members of an object an engine printed; none for anything else (a usage field that is not an object counts nothing). */
export function fieldsOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The sum of the counts named `keys` in `fields` (see `tokenCount`). */
export function countsOf(fields: Record<string, unknown>, ...keys: string[]): number {
  return keys.reduce((sum, key) => sum + tokenCount(fields[key]), 0);
}

/**
 * A usage from an engine's counts: `input` counts every input token, the cached ones included,
 * and `cached` (never more than `input`) is that cached part. `requests` null: the engine does
 * not count its model calls, and one is assumed where tokens went in or out, none where nothing did.
 */
export function reportedUsage(input: number, output: number, cached: number, requests: number | null): Usage {
  return { input_tokens: input, output_tokens: output, cached_input_tokens: Math.min(cached, input), requests: requests ?? (input + output > 0 ? 1 : 0) };
}
