import type { ParsedTurn, TurnParser } from './engine.js';
import { parseObject } from './json-text.js';
import type { ErrorFields } from './provider-errors.js';

/**
 * A turn read from an engine's stdout of JSON events, one per line (Codex `exec --json`, Claude
 * Code's stream-json): other lines and stderr are not events. Each engine says what an event means.
 */
export abstract class JsonEventParser implements TurnParser {
  protected readonly turn: ParsedTurn = { sessionId: null, messages: [], engineError: null, usage: null, usageSpan: 'turn' };
  /** Set with `turn.engineError` by an engine whose error events carry fields of their own. */
  protected fields: ErrorFields | null = null;
  #ended = false;

  get errorFields(): ErrorFields | null {
    return this.fields;
  }

  get turnEnded(): boolean {
    return this.#ended;
  }

  line(stream: 'stdout' | 'stderr', text: string): void {
    if (stream !== 'stdout') return;
    const event = parseObject(text);
    if (event !== null && this.event(event) === 'turn_ended') this.#ended = true;
  }

  result(): ParsedTurn {
    return { ...this.turn, messages: [...this.turn.messages] };
  }

  /** Reads one event into `turn`; says when it is the engine's end of the turn. */
  protected abstract event(event: Record<string, unknown>): 'turn_ended' | undefined;
}
