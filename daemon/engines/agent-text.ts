import type { AgentText } from './engine.js';

/** One engine's reading of its stdout lines (`EngineAdapter.agentText`). */
export type AgentTextOf = (line: string) => AgentText | null;

/** Reads lines in order with an engine's `agentText`, leaving out the blocks it marks as quiet (`quietUntil`). */
export class AgentTextReader {
  readonly #textOf: AgentTextOf;
  #quietUntil: string | null = null;

  constructor(textOf: AgentTextOf) {
    this.#textOf = textOf;
  }

  /** The agent's words in the next line (an empty whole message ends a message in pieces), or null: nothing, or inside a quiet block. */
  line(line: string): AgentText | null {
    if (this.#quietUntil !== null) {
      if (line.includes(this.#quietUntil)) this.#quietUntil = null;
      return null;
    }
    const said = this.#textOf(line);
    this.#quietUntil = said?.quietUntil ?? null;
    return said === null || (said.piece && said.text === '') ? null : said;
  }
}

/**
 * Whole messages out of an engine's stdout lines, as they come: a whole message is reported at
 * once; pieces are joined until a whole message follows or the output ends (`end`).
 */
export class AgentMessages {
  readonly #reader: AgentTextReader;
  readonly #onMessage: (text: string) => void;
  #pieces: string[] = [];

  constructor(textOf: AgentTextOf, onMessage: (text: string) => void) {
    this.#reader = new AgentTextReader(textOf);
    this.#onMessage = onMessage;
  }

  line(line: string): void {
    const said = this.#reader.line(line);
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
  const reader = new AgentTextReader(textOf);
  let out = '';
  for (const line of lines) {
    const said = reader.line(line);
    if (said === null) continue;
    const open = out !== '' && !out.endsWith('\n');
    if (said.piece) out += said.text;
    else if (said.text === '') out += open ? '\n' : '';
    else out += `${open ? '\n' : ''}${said.text}${said.text.endsWith('\n') ? '' : '\n'}`;
  }
  return out;
}
