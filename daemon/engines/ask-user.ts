import { parse as parseYaml } from 'yaml';
import { fencedBlocks, objectSpans, parseObject } from './json-text.js';

const BLOCK = /<ASK_USER_YAML>([\s\S]*?)(?:<\/ASK_USER_YAML>|$)/;
const BLOCK_GLOBAL = /<ASK_USER_YAML>[\s\S]*?(?:<\/ASK_USER_YAML>|$)/g;

export interface AskUserOption {
  label: string;
  value: unknown;
}

/** A well-formed hint: optional enrichment of the pending interaction, never business output. */
export interface AskUserHint {
  prompt: string;
  kind: string | null;
  options: AskUserOption[] | null;
  ui_hints: Record<string, unknown> | null;
}

/** What a message says about asking: no signal, a readable hint, or a signal that could not be read. */
export type AskUserSignal = { kind: 'none' } | { kind: 'hint'; hint: AskUserHint } | { kind: 'malformed'; reason: string };

/** Reads the `<ASK_USER_YAML>` block, or a legacy JSON envelope, of a message (D-4). */
export function readAskUser(message: string): AskUserSignal {
  const block = BLOCK.exec(message);
  if (block !== null) return hintFromYaml(block[1] ?? '');
  const legacy = legacyEnvelope(message);
  if (legacy === null) return { kind: 'none' };
  return toHint(legacy['interaction'] ?? legacy['ask_user'] ?? legacy);
}

/** The message without any hint block, for the pending prompt fallback and output extraction. */
export function withoutAskUserBlock(message: string): string {
  return message.replace(BLOCK_GLOBAL, '').trim();
}

/** The first legacy envelope anywhere in a message: the whole text, a fenced block or a `{…}` span. */
export function legacyEnvelope(message: string): Record<string, unknown> | null {
  for (const candidate of [message, ...fencedBlocks(message), ...objectSpans(message)]) {
    const value = parseObject(candidate);
    if (value !== null && isLegacyEnvelope(value)) return value;
  }
  return null;
}

/** A legacy envelope: an object whose `type` or `outcome` is "ask_user", or that has an `ask_user` object. */
export function isLegacyEnvelope(value: Record<string, unknown>): boolean {
  if (value['type'] === 'ask_user' || value['outcome'] === 'ask_user') return true;
  return typeof value['ask_user'] === 'object' && value['ask_user'] !== null;
}

function hintFromYaml(text: string): AskUserSignal {
  try {
    return toHint(parseYaml(text));
  } catch (error) {
    return { kind: 'malformed', reason: `hint block is not YAML: ${(error as Error).message.split('\n')[0] ?? ''}` };
  }
}

function toHint(value: unknown): AskUserSignal {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'malformed', reason: 'hint is not a mapping' };
  const v = value as Record<string, unknown>;
  if (typeof v['prompt'] !== 'string' || v['prompt'].trim() === '') return { kind: 'malformed', reason: 'hint has no prompt' };
  const options = v['options'];
  if (options !== undefined && !(Array.isArray(options) && options.every(isOption))) return { kind: 'malformed', reason: 'hint options must be a list of {label, value}' };
  const uiHints = v['ui_hints'];
  return {
    kind: 'hint',
    hint: {
      prompt: v['prompt'],
      kind: typeof v['kind'] === 'string' ? v['kind'] : null,
      options: (options as AskUserOption[] | undefined) ?? null,
      ui_hints: typeof uiHints === 'object' && uiHints !== null && !Array.isArray(uiHints) ? (uiHints as Record<string, unknown>) : null,
    },
  };
}

function isOption(value: unknown): value is AskUserOption {
  return typeof value === 'object' && value !== null && typeof (value as { label?: unknown }).label === 'string' && 'value' in value;
}
