import type { EngineName } from '../model/job.js';
import type { Usage } from '../model/usage.js';
import type { LiveProtocol } from './live-session.js';
import type { PromptRules } from './prompt-route.js';
import type { ErrorFields } from './provider-errors.js';

/** What one turn's output said, engine-neutral. */
export interface ParsedTurn {
  /** The engine's session id for resuming, or null when the output carried none (or none valid, see `sessionIdOf`). */
  sessionId: string | null;
  /** The turn's assistant messages in order; the last is the final one. */
  messages: string[];
  /** An error the engine itself reported in its output (e.g. codex `turn.failed`). */
  engineError: string | null;
  /**
   * What the turn's model calls used, as the engine reported it at the end of the turn (where no
   * model gateway counts them, this is all there is); null when it reported nothing.
   */
  usage: Usage | null;
  /**
   * What `usage`'s tokens cover. `turn`: this turn alone. `session`: the engine's session from its
   * start to the end of this turn. Codex `exec` reports its thread's running total, and a resumed
   * thread goes on from the earlier turns' (this turn's own tokens are the difference from the
   * previous report); `requests` still counts this turn's alone.
   */
  usageSpan: 'turn' | 'session';
}

/**
 * The agent's words in one line an engine printed on stdout (a one-shot turn's output, or one
 * message of its live protocol): a whole message, or a `piece` of one that the next pieces go on
 * with (ACP streams a message in chunks; iFlow prints its answer as plain lines). An empty whole
 * message says nothing but ends the pieces before it.
 */
export interface AgentText {
  text: string;
  piece: boolean;
  /** The lines after this one carry no words of the agent, up to the first that contains this marker (a block of the engine's own). */
  quietUntil?: string;
}

/** Reads one turn's output line by line. */
export interface TurnParser {
  line(stream: 'stdout' | 'stderr', text: string): void;
  /** True once the engine's turn-end signal was seen (the sticky transport waits for it). */
  readonly turnEnded: boolean;
  /** What was seen so far; call at the end of the turn. */
  result(): ParsedTurn;
  /**
   * What the engine gave in fields of its own with the error of `result().engineError` (the
   * provider's status, an error type): how a provider's refusal is told (provider-errors.ts).
   */
  readonly errorFields?: ErrorFields | null;
}

/**
 * Builds one engine's command lines and reads its output (docs/engines.md). A null prompt means that it
 * is written to the engine's stdin instead (see `routePrompt`).
 */
export interface EngineAdapter {
  readonly name: EngineName;
  startArgs(prompt: string | null, model: string | null): string[];
  resumeArgs(sessionId: string, prompt: string | null, model: string | null): string[];
  /** What the CLI accepts as a prompt, and whether it reads one from stdin. */
  readonly prompt: PromptRules;
  newParser(): TurnParser;
  /** What the agent says in one stdout line, one-shot or live alike; null for lines that carry no words of the agent. Pure. */
  agentText(line: string): AgentText | null;
  /** Environment the engine needs to behave under supervision (merged under the configured env). */
  readonly env: Readonly<Record<string, string>>;
  /** Text that `<command> --help` must contain for the resume probe, and the dynamic probe's argv. */
  readonly probe: { helpHint: string; resumeCheckArgs: string[] };
  /** The engine's long-lived protocol, which sticky jobs run over (see live-session.ts). */
  readonly live: LiveProtocol;
}

/** `--model=<name>`: the `=` form, so that no model name can be read as an option of its own. */
export function modelArgs(model: string | null): string[] {
  return model === null ? [] : [`--model=${model}`];
}

/** `--prompt=<text>`, which keeps a prompt that starts with `-` from being read as an option; nothing when it goes on stdin. */
export function promptFlag(prompt: string | null): string[] {
  return prompt === null ? [] : [`--prompt=${prompt}`];
}

/**
 * Session ids come from the engine's output, that is from a model's process: one is kept only if
 * it cannot be read as an option or a path (a letter or digit, then letters, digits, `.`, `_`,
 * `-`; at most 128 characters), so that it is safe to pass back on a resume's command line.
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The value as a session id, or null when it is not a string matching `SESSION_ID_PATTERN`. */
export function sessionIdOf(value: unknown): string | null {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value) ? value : null;
}
