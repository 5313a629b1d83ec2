import type { AgentText } from '../engine.js';

/**
 * The agent's words in one ACP message: the text of an `agent_message_chunk` update, a piece of
 * the message that the next chunks go on with (thoughts, tool calls and plans are not words to
 * the user). Null for any other message.
 */
export function acpAgentText(message: Record<string, unknown>): AgentText | null {
  if (message['method'] !== 'session/update') return null;
  const update = (message['params'] as { update?: unknown } | undefined)?.update as { sessionUpdate?: unknown; content?: { type?: unknown; text?: unknown } } | undefined;
  if (update?.sessionUpdate !== 'agent_message_chunk') return null;
  const { type, text } = update.content ?? {};
  return type === 'text' && typeof text === 'string' && text !== '' ? { text, piece: true } : null;
}

/** Whether a parsed line is a JSON-RPC message of the live protocol (every ACP message carries `"jsonrpc": "2.0"`). */
export function isAcpMessage(value: Record<string, unknown> | null): value is Record<string, unknown> {
  return value !== null && value['jsonrpc'] === '2.0';
}
