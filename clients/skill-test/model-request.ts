import type { IncomingHttpHeaders } from 'node:http';
import { anthropicConversation, isMessagesCall } from './anthropic-api.js';

/**
 * A model request as the scripted model server records it: which API it came through (the OpenAI
 * Responses API, the Gemini API, the Anthropic Messages API) and the conversation it carried, read
 * into one engine-neutral shape.
 */

/** Which API a request came through. */
export type ModelApi = 'responses' | 'gemini' | 'anthropic' | 'unknown';

/** One entry of the conversation a CLI sent, normalized across both APIs. */
export type ConversationEntry =
  | { role: 'system' | 'user' | 'assistant'; text: string }
  | { role: 'tool_call'; name: string; args: unknown }
  | { role: 'tool_result'; name: string; output: string };

/** A recorded request, with the conversation it carried. */
export interface ModelRequest {
  api: ModelApi;
  method: string;
  /** Path and query, e.g. `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or null when there was none or it was not JSON. */
  body: unknown;
  /** The model named in the body (Responses, Messages) or in the path (Gemini). */
  model: string | null;
  /** True when the CLI wants SSE (`stream: true`, `:streamGenerateContent`); false for Gemini's `:generateContent`. */
  stream: boolean;
  /** The whole conversation, in order: instructions, earlier turns, tool calls and their results. */
  conversation: ConversationEntry[];
  /** The text of every user entry, in order (Codex also sends its environment context as user text). */
  userTexts: string[];
  /** The text of the last user entry: the prompt of the current turn (for Messages, after its `<system-reminder>` blocks). */
  prompt: string | null;
  /** True when the conversation ends with a tool result: the CLI is reporting a command's output. */
  afterToolResult: boolean;
}


const GEMINI_GENERATE = /^\/v1(?:beta|alpha)?\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)/;

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

/** What kind of call a request is, and what it carried. */
type Classified = Pick<ModelRequest, 'api' | 'model' | 'stream' | 'conversation'>;

/** Parses one HTTP request (its method, URL, headers and decoded body) into a recorded `ModelRequest`. */
export function toModelRequest(method: string, url: string, headers: IncomingHttpHeaders, raw: Buffer): ModelRequest {
  const body = parseJson(raw);
  return withSummary({ method, url, headers, body, ...classify(method, url, body) });
}


/** Recognizes Responses API calls (`POST …/responses`) and Gemini generate calls. */
function classify(method: string, url: string, body: unknown): Classified {
  const path = url.split('?')[0] ?? url;
  const gemini = GEMINI_GENERATE.exec(path);
  if (method === 'POST' && /\/responses$/.test(path)) {
    const stream = isRecord(body) && body['stream'] === true;
    return { api: 'responses', model: stringField(body, 'model'), stream, conversation: responsesConversation(body) };
  }
  if (isMessagesCall(method, path)) {
    const stream = isRecord(body) && body['stream'] === true;
    return { api: 'anthropic', model: stringField(body, 'model'), stream, conversation: anthropicConversation(body) };
  }
  if (method === 'POST' && gemini !== null && gemini[2] !== 'countTokens') {
    const stream = gemini[2] === 'streamGenerateContent';
    return { api: 'gemini', model: decodeURIComponent(gemini[1] ?? ''), stream, conversation: geminiConversation(body) };
  }
  return { api: 'unknown', model: null, stream: false, conversation: [] };
}

/** Adds the derived fields: user texts, current prompt, whether a tool result is being reported. */
function withSummary(base: Omit<ModelRequest, 'userTexts' | 'prompt' | 'afterToolResult'>): ModelRequest {
  const userTexts = base.conversation.flatMap((e) => (e.role === 'user' ? [e.text] : []));
  const last = base.conversation[base.conversation.length - 1];
  return { ...base, userTexts, prompt: userTexts[userTexts.length - 1] ?? null, afterToolResult: last?.role === 'tool_result' };
}

// Request parsing

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(value: unknown, key: string): string | null {
  if (!isRecord(value)) return null;
  const field = value[key];
  return typeof field === 'string' ? field : null;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The conversation of a Responses API body: `instructions` plus the `input` items. */
function responsesConversation(body: unknown): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  const instructions = stringField(body, 'instructions');
  if (instructions !== null) entries.push({ role: 'system', text: instructions });
  const input = isRecord(body) ? body['input'] : undefined;
  if (typeof input === 'string') entries.push({ role: 'user', text: input });
  for (const item of asArray(input)) entries.push(...responsesItem(item));
  return entries;
}

/** One `input` item: a message, a tool call or a tool call's output. */
function responsesItem(item: unknown): ConversationEntry[] {
  if (!isRecord(item)) return [];
  const type = item['type'] ?? 'message';
  if (type === 'message') return [{ role: messageRole(item['role']), text: contentText(item['content']) }];
  if (type === 'function_call' || type === 'custom_tool_call' || type === 'local_shell_call') {
    return [{ role: 'tool_call', name: String(item['name'] ?? type), args: parseMaybeJson(item['arguments'] ?? item['input'] ?? item['action']) }];
  }
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    return [{ role: 'tool_result', name: String(item['call_id'] ?? ''), output: outputText(item['output']) }];
  }
  return [];
}

function messageRole(role: unknown): 'system' | 'user' | 'assistant' {
  if (role === 'assistant') return 'assistant';
  if (role === 'system' || role === 'developer') return 'system';
  return 'user';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => stringField(part, 'text') ?? '')
    .join('');
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (isRecord(output) && typeof output['content'] === 'string') return output['content'];
  if (Array.isArray(output)) return contentText(output);
  return JSON.stringify(output ?? null);
}

function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** The conversation of a Gemini API body: `systemInstruction` plus `contents`. */
function geminiConversation(body: unknown): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  if (!isRecord(body)) return entries;
  const system = body['systemInstruction'];
  if (system !== undefined) entries.push({ role: 'system', text: partsText(isRecord(system) ? system['parts'] : system) });
  for (const content of asArray(body['contents'])) entries.push(...geminiContent(content));
  return entries;
}

function geminiContent(content: unknown): ConversationEntry[] {
  if (!isRecord(content)) return [];
  const role = content['role'] === 'model' ? 'assistant' : 'user';
  return asArray(content['parts']).flatMap((part) => geminiPart(role, part));
}

/** One part of a Gemini content: a text (thoughts skipped), a function call or a function response. */
function geminiPart(role: 'user' | 'assistant', part: unknown): ConversationEntry[] {
  if (!isRecord(part)) return [];
  const call = part['functionCall'];
  if (isRecord(call)) return [{ role: 'tool_call', name: String(call['name'] ?? ''), args: call['args'] ?? null }];
  const result = part['functionResponse'];
  if (isRecord(result)) return [{ role: 'tool_result', name: String(result['name'] ?? ''), output: JSON.stringify(result['response'] ?? null) }];
  if (typeof part['text'] === 'string' && part['thought'] !== true) return [{ role, text: part['text'] }];
  return [];
}

function partsText(parts: unknown): string {
  if (typeof parts === 'string') return parts;
  return asArray(parts)
    .map((part) => stringField(part, 'text') ?? '')
    .join('');
}
