import type { SessionUpdate, StopReason } from '@agentclientprotocol/sdk';
import type { Usage } from '../../model/usage.js';
import type { LiveEvent, LiveTurnResult } from '../live-session.js';
import { acpErrorFields } from '../provider-errors.js';

/**
 * The assistant messages of one ACP turn. A message is a run of `agent_message_chunk` texts; it
 * ends where the agent turns to a tool (a `tool_call` or `tool_call_update` update, or a
 * permission request) and at the end of the turn, so the text after the last tool is the last
 * message: the final answer. Thoughts, plans, command lists and other notices neither add to a
 * message nor end one.
 */
export class TurnMessages {
  readonly #messages: string[] = [];
  readonly #onEvent: (event: LiveEvent) => void;
  #open: string[] = [];

  constructor(onEvent: (event: LiveEvent) => void) {
    this.#onEvent = onEvent;
  }

  /** One `session/update` of the turn, in arrival order. */
  update(update: SessionUpdate): void {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content.type === 'text') this.#open.push(update.content.text);
        return;
      case 'tool_call':
      case 'tool_call_update':
        this.endMessage();
        return;
      default:
        return;
    }
  }

  /** Closes the message being written, if any, and reports it; an empty one is dropped. */
  endMessage(): void {
    const text = this.#open.join('');
    this.#open = [];
    if (text === '') return;
    this.#messages.push(text);
    this.#onEvent({ type: 'message', text });
  }

  /** The turn ended with the agent's `stopReason`: `end_turn` completes it, `cancelled` interrupts it, anything else fails it. */
  stopped(reason: StopReason, usage: Usage | null): LiveTurnResult {
    if (reason === 'end_turn') return this.#result('completed', null, usage);
    if (reason === 'cancelled') return this.#result('interrupted', null, usage);
    return this.#result('failed', `the agent stopped the turn: ${reason}`, usage);
  }

  /** The agent answered the prompt with an error instead of a stop reason (and no usage); its code, for Gemini, is the provider's status. */
  failed(message: string, code?: number): LiveTurnResult {
    const fields = acpErrorFields(code);
    return { ...this.#result('failed', message, null), ...(fields === null ? {} : { errorFields: fields }) };
  }

  #result(outcome: LiveTurnResult['outcome'], error: string | null, usage: Usage | null): LiveTurnResult {
    this.endMessage();
    return { outcome, messages: [...this.#messages], error, usage };
  }
}
