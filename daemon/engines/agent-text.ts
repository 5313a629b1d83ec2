import type { AgentText } from './engine.js';

/** One engine's reading of its stdout lines (`EngineAdapter.agentText`). */
export type AgentTextOf = (line: string) => AgentText | null;

/**
 * Whole messages out of an engine's stdout lines, as they come: a whole message is reported at
 * once; pieces are joined until a whole message follows or the output ends (`end`).
 */
export class AgentMessages {
  readonly #textOf: AgentTextOf;
  readonly #onMessage: (text: string) => void;
  #pieces: string[] = [];

  constructor(textOf: AgentTextOf, onMessage: (text: string) => void) {
    this.#textOf = textOf;
    this.#onMessage = onMessage;
  }

  line(line: string): void {
    const said = this.#textOf(line);
    if (said === null) return;
    if (said.piece) {
      this.#pieces.push(said.text);
      return;
    }
    this.end();
    if (said.text.trim() !== '') this.#onMessage(said.text);
  }

  /** The output ended (or a whole message follows): the pieces so far are one message. */
  end(): void {
    const text = this.#pieces.join('').trim();
    this.#pieces = [];
    if (text !== '') this.#onMessage(text);
  }
}

/**
 * The agent's words in a run of stdout lines, as text for a person: each whole message on lines
 * of its own, ending with a line break; pieces run together as the engine streamed them.
 */
export function agentTranscript(lines: readonly string[], textOf: AgentTextOf): string {
  let out = '';
  for (const line of lines) {
    const said = textOf(line);
    if (said === null || said.text === '') continue;
    if (said.piece) out += said.text;
    else out += `${out === '' || out.endsWith('\n') ? '' : '\n'}${said.text}${said.text.endsWith('\n') ? '' : '\n'}`;
  }
  return out;
}
