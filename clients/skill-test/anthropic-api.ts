import type { Said, ToolCall } from './tool-calls.js';

/**
 * The Anthropic Messages API as the scripted model server speaks it to Claude Code:
 * `POST /v1/messages?beta=true` with `stream: true` answered as SSE. Request bodies are read into
 * the server's engine-neutral conversation; replies are written as the API's event stream.
 */

/** One entry of a conversation (the same shape as `ConversationEntry` of model-server.ts). */
export type AnthropicEntry =
  | { role: 'system' | 'user' | 'assistant'; text: string }
  | { role: 'tool_call'; name: string; args: unknown }
  | { role: 'tool_result'; name: string; output: string };

/** Claude Code's shell tool. */
export const CLAUDE_SHELL_TOOL = 'Bash';

const REMINDER = /^\s*<system-reminder>[\s\S]*?<\/system-reminder>\s*/;

/** True for `POST /v1/messages` (with or without `?beta=true`), not for its sub-paths. */
export function isMessagesCall(method: string, path: string): boolean {
  return method === 'POST' && /^\/v1\/messages\/?$/.test(path);
}

/** True for `POST /v1/messages/count_tokens`. */
export function isCountTokensCall(method: string, path: string): boolean {
  return method === 'POST' && /^\/v1\/messages\/count_tokens\/?$/.test(path);
}

/** The conversation of a Messages body: `system`, then each message's blocks in order. */
export function anthropicConversation(body: unknown): AnthropicEntry[] {
  if (!isRecord(body)) return [];
  const entries: AnthropicEntry[] = [];
  const system = body['system'];
  if (system !== undefined) entries.push({ role: 'system', text: blocksText(system) });
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  for (const message of messages) if (isRecord(message)) entries.push(...messageEntries(message));
  return entries;
}

function messageEntries(message: Record<string, unknown>): AnthropicEntry[] {
  const role = message['role'] === 'assistant' ? 'assistant' : message['role'] === 'system' ? 'system' : 'user';
  const content = message['content'];
  if (typeof content === 'string') return textEntry(role, content);
  const entries: AnthropicEntry[] = [];
  for (const block of Array.isArray(content) ? content : []) {
    if (!isRecord(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') entries.push(...textEntry(role, block['text']));
    else if (block['type'] === 'tool_use') entries.push({ role: 'tool_call', name: String(block['name'] ?? ''), args: block['input'] ?? null });
    else if (block['type'] === 'tool_result') entries.push({ role: 'tool_result', name: String(block['tool_use_id'] ?? ''), output: blocksText(block['content']) });
  }
  return entries;
}

/** A user text without the `<system-reminder>` blocks Claude Code puts in front of it; nothing when only reminders are left. */
function textEntry(role: 'system' | 'user' | 'assistant', text: string): AnthropicEntry[] {
  if (role !== 'user') return [{ role, text }];
  let rest = text;
  for (let match = REMINDER.exec(rest); match !== null; match = REMINDER.exec(rest)) rest = rest.slice(match[0].length);
  return rest === '' && text !== '' ? [] : [{ role, text: rest }];
}

function blocksText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  return value.map((block) => (isRecord(block) && typeof block['text'] === 'string' ? block['text'] : '')).join('');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function frame(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** The SSE events of one Messages API turn: a text, or a single tool call (`Bash` for a command). */
export function anthropicEvents(reply: Said, n: number, model: string): string[] {
  const toolUse = 'toolCall' in reply;
  const start = toolUse ? { type: 'tool_use', id: `toolu_${n}`, name: toolUseOf(reply.toolCall).name, input: {} } : { type: 'text', text: '' };
  const delta = toolUse ? { type: 'input_json_delta', partial_json: JSON.stringify(toolUseOf(reply.toolCall).input) } : { type: 'text_delta', text: reply.text };
  const message = { id: `msg_${n}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } };
  return [
    frame('message_start', { message }),
    frame('content_block_start', { index: 0, content_block: start }),
    frame('content_block_delta', { index: 0, delta }),
    frame('content_block_stop', { index: 0 }),
    frame('message_delta', { delta: { stop_reason: toolUse ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
    frame('message_stop', {}),
  ];
}

/** The whole message of a turn without `stream`: a text, or a single tool call (`Bash` for a command). */
export function anthropicMessage(reply: Said, n: number, model: string): Record<string, unknown> {
  const toolUse = 'toolCall' in reply;
  const content = toolUse ? [{ type: 'tool_use', id: `toolu_${n}`, ...toolUseOf(reply.toolCall) }] : [{ type: 'text', text: reply.text }];
  return { id: `msg_${n}`, type: 'message', role: 'assistant', model, content, stop_reason: toolUse ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } };
}

/** A tool_use block's tool and input: `Bash` for a command. */
function toolUseOf(call: ToolCall): { name: string; input: Record<string, unknown> } {
  return 'command' in call ? { name: CLAUDE_SHELL_TOOL, input: { command: call.command, description: 'Run the command' } } : { name: call.name, input: call.args };
}

/** The body of an API error, as the Messages API words one. */
export function anthropicError(status: number, message: string): Record<string, unknown> {
  const type = status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  return { type: 'error', error: { type, message } };
}
