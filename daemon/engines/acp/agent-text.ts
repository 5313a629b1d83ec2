import type { AgentText } from '../engine.js';

/** A message in pieces ends here (nothing more is said). */
const END_OF_MESSAGE: AgentText = { text: '', piece: false };

/**
 * The agent's words in one ACP message: the text of an `agent_message_chunk` update, a piece of
 * the message that the next chunks go on with. As the live session reads it, that message ends
 * where the agent turns to a tool (a tool call, its update, a permission request) and with the
 * turn (the prompt's answer): those give an empty whole message, the end of the pieces. Thoughts,
 * plans and other messages say nothing (null).
 */
export function acpAgentText(message: Record<string, unknown>): AgentText | null {
  if (message['method'] === 'session/request_permission') return END_OF_MESSAGE;
  if (message['method'] === undefined) return 'id' in message ? END_OF_MESSAGE : null;
  if (message['method'] !== 'session/update') return null;
  const update = (message['params'] as { update?: unknown } | undefined)?.update as { sessionUpdate?: unknown; content?: { type?: unknown; text?: unknown } } | undefined;
  if (update?.sessionUpdate === 'tool_call' || update?.sessionUpdate === 'tool_call_update') return END_OF_MESSAGE;
  if (update?.sessionUpdate !== 'agent_message_chunk') return null;
  const { type, text } = update.content ?? {};
  return type === 'text' && typeof text === 'string' && text !== '' ? { text, piece: true } : null;
}

/** Whether a parsed line is a JSON-RPC message of the live protocol (every ACP message carries `"jsonrpc": "2.0"`). */
export function isAcpMessage(value: Record<string, unknown> | null): value is Record<string, unknown> {
  return value !== null && value['jsonrpc'] === '2.0';
}
