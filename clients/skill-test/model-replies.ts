import type { ServerResponse } from 'node:http';
import { anthropicError, anthropicEvents, anthropicMessage } from './anthropic-api.js';
import type { ModelApi, ModelRequest } from './model-request.js';
import { geminiFunctionCall, responsesFunctionCall, type Said, type ToolCall } from './tool-calls.js';

/**
 * The scripted model server's answers, in the wire format of each API: SSE for the Responses API,
 * the Gemini API (or one JSON body for `:generateContent`) and the Messages API (or one JSON body
 * without `stream`).
 */

/** What the scripted model answers. */
export type ModelReply =
  | { text: string }
  | { toolCall: ToolCall }
  | { hang: true }
  | { error: { status: number; message: string; retryAfter?: string } };


/**
 * Writes the scripted reply in the wire format of the request's API; `n` numbers the reply's ids.
 * A `hang` reply sends the headers only and hands the response to `onHang`, which ends it later.
 */
export function sendReply(request: ModelRequest, reply: ModelReply, n: number, res: ServerResponse, onHang: (res: ServerResponse) => void): void {
  if ('hang' in reply) return hang(res, onHang);
  if ('error' in reply) return sendError(request.api, reply.error, res);
  if (request.api === 'anthropic') return sendAnthropic(reply, n, request, res);
  if (request.api === 'gemini' && !request.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(geminiChunk(reply, n, request.model ?? 'fake-model')));
    return;
  }
  const events = request.api === 'responses' ? responsesEvents(reply, n) : geminiEvents(reply, n, request.model ?? 'fake-model');
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.end(events.join(''));
}

/** Sends the SSE headers and never finishes: for killing a CLI mid-turn. */
function hang(res: ServerResponse, onHang: (res: ServerResponse) => void): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  onHang(res);
}

/** An HTTP error in the API's shape (Responses and Gemini: `{error: {code, message, status}}`), with a `Retry-After` when the script gives one. */
function sendError(api: ModelApi, error: { status: number; message: string; retryAfter?: string }, res: ServerResponse): void {
  res.writeHead(error.status, { 'content-type': 'application/json', ...(error.retryAfter === undefined ? {} : { 'retry-after': error.retryAfter }) });
  const body = api === 'anthropic' ? anthropicError(error.status, error.message) : { error: { code: error.status, message: error.message, status: 'INTERNAL' } };
  res.end(JSON.stringify(body));
}

/** A Messages reply: SSE for `stream: true`, else the whole message as one JSON body. */
function sendAnthropic(reply: Said, n: number, request: ModelRequest, res: ServerResponse): void {
  const events = anthropicEvents(reply, n, request.model ?? 'fake-model');
  if (request.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.end(events.join(''));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(anthropicMessage(reply, n, request.model ?? 'fake-model')));
}

/** One SSE frame of the Responses API. */
function responsesFrame(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

const RESPONSES_USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
};

/** The SSE frames of one Responses API turn: a message, or a single tool call. */
export function responsesEvents(reply: Said, n: number): string[] {
  const responseId = `resp_${n}`;
  const item = 'text' in reply ? responsesMessage(reply.text, n) : responsesFunctionCall(reply.toolCall, n);
  const added = 'text' in reply ? { ...item, status: 'in_progress', content: [] } : { ...item, status: 'in_progress', arguments: '' };
  const frames = [
    responsesFrame('response.created', { response: { id: responseId, object: 'response', status: 'in_progress', output: [] } }),
    responsesFrame('response.output_item.added', { output_index: 0, item: added }),
  ];
  if ('text' in reply) frames.push(responsesFrame('response.output_text.delta', { item_id: item['id'], output_index: 0, content_index: 0, delta: reply.text }));
  frames.push(responsesFrame('response.output_item.done', { output_index: 0, item }));
  frames.push(responsesFrame('response.completed', { response: { id: responseId, object: 'response', status: 'completed', output: [item], usage: RESPONSES_USAGE } }));
  return frames;
}

/** An assistant `message` output item. */
function responsesMessage(text: string, n: number): Record<string, unknown> {
  return { type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

/** The SSE frames of one Gemini API turn: a text, or a single tool call. */
export function geminiEvents(reply: Said, n: number, model: string): string[] {
  return [`data: ${JSON.stringify(geminiChunk(reply, n, model))}\n\n`];
}

/** One `GenerateContentResponse`: the whole `:generateContent` body, or one SSE chunk. */
export function geminiChunk(reply: Said, n: number, model: string): Record<string, unknown> {
  const part = 'text' in reply ? { text: reply.text } : geminiFunctionCall(reply.toolCall, n);
  return {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: model,
    responseId: `gem_${n}`,
  };
}
