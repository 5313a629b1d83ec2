import { legacyEnvelope, withoutAskUserBlock } from '../engines/ask-user.js';

/** The business output found in a final message, and whether it needed repair to parse. */
export interface OutputCandidate {
  value: Record<string, unknown>;
  repaired: boolean;
}

const FENCE = /```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)```/g;

/**
 * Finds the JSON object in a final assistant message: the whole text, else the last fenced
 * ```json block, else the last balanced `{…}`. Hint blocks and legacy ask_user envelopes are never
 * output (D-4). Strict JSON first; then a deterministic repair (trailing commas, a JSON-encoded
 * string holding the object), which the caller reports as OUTPUT_REPAIRED.
 */
export function extractOutput(message: string): OutputCandidate | null {
  const text = withoutAskUserBlock(message);
  const candidates = [text, ...lastFence(text), ...lastBalancedObject(text)];
  for (const candidate of candidates) {
    const strict = parseObjectStrict(candidate);
    if (strict !== null) return legacyEnvelope(JSON.stringify(strict)) === null ? { value: strict, repaired: false } : null;
  }
  for (const candidate of candidates) {
    const repaired = repair(candidate);
    if (repaired !== null && legacyEnvelope(JSON.stringify(repaired)) === null) return { value: repaired, repaired: true };
  }
  return null;
}

function lastFence(text: string): string[] {
  const blocks = [...text.matchAll(FENCE)].map((m) => m[1] ?? '');
  return blocks.length === 0 ? [] : [blocks[blocks.length - 1] as string];
}

/** The last top-level `{…}` span, scanning with string and escape awareness. */
function lastBalancedObject(text: string): string[] {
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  let last: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"' && depth > 0) inString = true;
    else if (ch === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (ch === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) last = text.slice(start, i + 1);
    }
  }
  return last === null ? [] : [last];
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
  return parseObjectStrict(trimmed.replace(/,(\s*[}\]])/g, '$1'));
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
