import { isLegacyEnvelope, withoutAskUserBlock } from '../engines/ask-user.js';
import { fencedBlocks, objectSpans, withoutTrailingCommas } from '../engines/json-text.js';

/** The business output found in a final message, and whether it needed repair to parse. */
export interface OutputCandidate {
  value: Record<string, unknown>;
  repaired: boolean;
}

/**
 * Finds the JSON object in a final assistant message: the whole text, else the last fenced
 * ```json block, else the last balanced `{…}`. Hint blocks and legacy ask_user envelopes are never
 * output (D-4). Strict JSON first; then a deterministic repair (trailing commas, a JSON-encoded
 * string holding the object), which the caller reports as OUTPUT_REPAIRED.
 */
export function extractOutput(message: string): OutputCandidate | null {
  const text = withoutAskUserBlock(message);
  const candidates = [text, ...fencedBlocks(text).slice(-1), ...objectSpans(text).slice(-1)];
  for (const candidate of candidates) {
    const strict = parseObjectStrict(candidate);
    if (strict !== null) return isLegacyEnvelope(strict) ? null : { value: strict, repaired: false };
  }
  for (const candidate of candidates) {
    const repaired = repair(candidate);
    if (repaired !== null && !isLegacyEnvelope(repaired)) return { value: repaired, repaired: true };
  }
  return null;
}

function parseObjectStrict(text: string): Record<string, unknown> | null {
  try {
    return asObject(JSON.parse(text.trim()));
  } catch {
    return null;
  }
}

function repair(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  try {
    const value: unknown = JSON.parse(trimmed);
    if (typeof value === 'string') return parseObjectStrict(value);
  } catch {
    // not JSON at all; try the next repair
  }
  return parseObjectStrict(withoutTrailingCommas(trimmed));
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
