import type { EngineName } from '../jobs/job.js';

/** What one turn's output said, engine-neutral. */
export interface ParsedTurn {
  /** The engine's session id for resuming, or null when the output carried none. */
  sessionId: string | null;
  /** The turn's assistant messages in order; the last is the final one. */
  messages: string[];
  /** An error the engine itself reported in its output (e.g. codex `turn.failed`). */
  engineError: string | null;
}

/** Reads one turn's output line by line. */
export interface TurnParser {
  line(stream: 'stdout' | 'stderr', text: string): void;
  /** True once the engine's turn-end signal was seen (the sticky transport waits for it). */
  readonly turnEnded: boolean;
  /** What was seen so far; call at the end of the turn. */
  result(): ParsedTurn;
}

/** Builds one engine's command lines and reads its output (SPEC §6). */
export interface EngineAdapter {
  readonly name: EngineName;
  startArgs(prompt: string, model: string | null): string[];
  resumeArgs(sessionId: string, prompt: string, model: string | null): string[];
  newParser(): TurnParser;
  /** Environment the engine needs to behave under supervision (merged under the configured env). */
  readonly env: Readonly<Record<string, string>>;
  /** Text that `<command> --help` must contain for the resume probe, and the dynamic probe's argv. */
  readonly probe: { helpHint: string; resumeCheckArgs: string[] };
}

/** `--model=<name>`: the `=` form, so that no model name can be read as an option of its own. */
export function modelArgs(model: string | null): string[] {
  return model === null ? [] : [`--model=${model}`];
}
