// The usage meter (daemon/network/usage-meter.ts): what each provider API reports of a response's
// usage, read from the body's bytes as they pass, in any chunking, compressed or not; and what it
// keeps while it reads.
import t from 'tap';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { Usage } from '../../daemon/model/usage.js';
import { MAX_JSON_BYTES, MAX_LINE_BYTES, MAX_PENDING_BYTES, UsageMeter, type MeteredHeaders } from '../../daemon/network/usage-meter.js';
import { anthropicEvents, anthropicMessage } from '../fixtures/anthropic-api.js';
import { geminiChunk, geminiEvents, responsesEvents } from '../fixtures/model-server.js';

const SSE: MeteredHeaders = { contentType: 'text/event-stream' };
const JSON_BODY: MeteredHeaders = { contentType: 'application/json; charset=utf-8' };

/** The usage the meter reads from `pieces`, written one after another. */
async function meter(headers: MeteredHeaders, ...pieces: (Buffer | string)[]): Promise<Usage | null> {
  const usageMeter = new UsageMeter(headers);
  for (const piece of pieces) usageMeter.write(Buffer.from(piece));
  return usageMeter.end();
}

/** `body` one byte at a time. */
function bytesOf(body: Buffer | string): Buffer[] {
  const bytes = Buffer.from(body);
  return Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
}

/** An SSE frame as the providers send one: an optional `event:` line, one `data:` line, a blank line. */
function frame(data: unknown, event?: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}

const usage = (input_tokens: number, cached_input_tokens: number, output_tokens: number): Usage => ({ input_tokens, cached_input_tokens, output_tokens, requests: 1 });

// ---------------------------------------------------------------------------------------------
// One response of each API, streamed and whole, with the usage each reports.

const RESPONSES_USAGE = { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 42, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 1242 };
const responsesStream = [
  frame({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [], usage: null } }, 'response.created'),
  frame({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello' }, 'response.output_text.delta'),
  frame({ type: 'response.completed', sequence_number: 2, response: { id: 'resp_1', object: 'response', status: 'completed', output: [], usage: RESPONSES_USAGE } }, 'response.completed'),
].join('');
const responsesBody = { id: 'resp_1', object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello' }] }], usage: RESPONSES_USAGE };

const CHAT_USAGE = { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320, prompt_tokens_details: { cached_tokens: 256 }, completion_tokens_details: { reasoning_tokens: 0 } };
const chatStream = [
  frame({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' } }], usage: null }),
  frame({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }),
  frame({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: CHAT_USAGE }),
  'data: [DONE]\n\n',
].join('');
const chatBody = { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }], usage: CHAT_USAGE };

/** Gemini repeats the running totals in every chunk: the last is the response's, not their sum. */
const geminiChunks = [3, 8, 15].map((candidates, i) => ({
  candidates: [{ content: { role: 'model', parts: [{ text: `part ${i}` }] }, index: 0 }],
  usageMetadata: { promptTokenCount: 500, cachedContentTokenCount: 400, candidatesTokenCount: candidates, thoughtsTokenCount: 10, totalTokenCount: 510 + candidates },
  modelVersion: 'gemini-x',
}));
const geminiStream = geminiChunks.map((chunk) => frame(chunk)).join('');
const GEMINI = usage(500, 400, 25);

const anthropicStream = [
  frame({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 20, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 1 } } }, 'message_start'),
  frame({ type: 'ping' }, 'ping'),
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }, 'content_block_delta'),
  frame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
  frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 57 } }, 'message_delta'),
  frame({ type: 'message_stop' }, 'message_stop'),
].join('');
const ANTHROPIC = usage(2120, 2000, 57);
const anthropicBody = { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hello' }], usage: { input_tokens: 20, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 57 } };

const streams = [
  { api: 'Responses', body: responsesStream, expected: usage(1200, 1024, 42) },
  { api: 'Chat Completions', body: chatStream, expected: usage(300, 256, 20) },
  { api: 'Gemini', body: geminiStream, expected: GEMINI },
  { api: 'Anthropic Messages', body: anthropicStream, expected: ANTHROPIC },
];

t.test('each API streamed: the usage it reports, in its own terms made one', async (t) => {
  for (const { api, body, expected } of streams) t.same(await meter(SSE, body), expected, api);
});

t.test('each API as one JSON body', async (t) => {
  t.same(await meter(JSON_BODY, JSON.stringify(responsesBody)), usage(1200, 1024, 42), 'Responses');
  t.same(await meter(JSON_BODY, JSON.stringify(chatBody)), usage(300, 256, 20), 'Chat Completions');
  t.same(await meter(JSON_BODY, JSON.stringify(geminiChunks[2])), GEMINI, 'Gemini :generateContent');
  t.same(await meter(JSON_BODY, JSON.stringify(geminiChunks, null, 2)), GEMINI, "Gemini's non-SSE stream, a JSON array of chunks, counted once");
  t.same(await meter(JSON_BODY, JSON.stringify({ response: geminiChunks[2], traceId: 't' })), GEMINI, 'Gemini through Code Assist, wrapped in `response`');
  t.same(await meter(JSON_BODY, JSON.stringify(anthropicBody)), ANTHROPIC, 'Anthropic Messages');
});

t.test("the scripted model server's own frames are read as the real APIs' are", async (t) => {
  const said = { text: 'OK' };
  t.same(await meter(SSE, responsesEvents(said, 1).join('')), usage(10, 0, 5), 'Responses SSE');
  t.same(await meter(SSE, geminiEvents(said, 1, 'm').join('')), usage(10, 0, 5), 'Gemini SSE');
  t.same(await meter(JSON_BODY, JSON.stringify(geminiChunk(said, 1, 'm'))), usage(10, 0, 5), 'Gemini JSON');
  t.same(await meter(SSE, anthropicEvents(said, 1, 'm').join('')), usage(10, 0, 5), 'Anthropic SSE: message_delta output replaces message_start output');
  t.same(await meter(JSON_BODY, JSON.stringify(anthropicMessage(said, 1, 'm'))), usage(10, 0, 5), 'Anthropic JSON');
});

t.test("Anthropic's message_delta may restate the input: each field's latest value stands", async (t) => {
  const restated = anthropicStream.replace('{"output_tokens":57}', '{"input_tokens":25,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":57}');
  t.same(await meter(SSE, restated), usage(2125, 2000, 57));
});

t.test("Gemini's thoughts and tool-use prompt count as output and input; cached never exceeds input", async (t) => {
  const body = { usageMetadata: { promptTokenCount: 100, toolUsePromptTokenCount: 7, candidatesTokenCount: 5, thoughtsTokenCount: 9 } };
  t.same(await meter(JSON_BODY, JSON.stringify(body)), usage(107, 0, 14));
  const odd = { usage: { prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 50 } } };
  t.same(await meter(JSON_BODY, JSON.stringify(odd)), usage(10, 10, 1));
});

t.test('a body split at every byte boundary, and fed a byte at a time, reads the same', async (t) => {
  for (const { api, body, expected } of streams) {
    let differing = 0;
    for (let at = 0; at <= body.length; at += 1) {
      const got = await meter(SSE, body.slice(0, at), body.slice(at));
      if (JSON.stringify(got) !== JSON.stringify(expected)) differing += 1;
    }
    t.equal(differing, 0, `${api}: every split of ${body.length} bytes`);
    t.same(await meter(SSE, ...bytesOf(body)), expected, `${api}: a byte at a time`);
  }
  t.same(await meter(JSON_BODY, ...bytesOf(JSON.stringify(anthropicBody))), ANTHROPIC, 'a JSON body a byte at a time');
});

t.test('CRLF line ends, and a last line without a line end, are read', async (t) => {
  t.same(await meter(SSE, anthropicStream.replaceAll('\n', '\r\n')), ANTHROPIC, 'CRLF');
  const last = frame({ type: 'response.completed', response: { usage: RESPONSES_USAGE } }).trimEnd();
  t.same(await meter(SSE, last), usage(1200, 1024, 42), 'no line end at all');
  t.same(await meter(SSE, 'data:{"usage":{"input_tokens":3,"output_tokens":4}}\n'), usage(3, 0, 4), '`data:` without a space');
});

t.test('a compressed body is decompressed for reading: gzip, deflate, br; in any chunking', async (t) => {
  t.same(await meter({ ...SSE, contentEncoding: 'gzip' }, gzipSync(anthropicStream)), ANTHROPIC, 'gzip SSE');
  t.same(await meter({ ...SSE, contentEncoding: 'x-gzip' }, ...bytesOf(gzipSync(anthropicStream))), ANTHROPIC, 'gzip SSE a byte at a time');
  t.same(await meter({ ...SSE, contentEncoding: 'deflate' }, deflateSync(geminiStream)), GEMINI, 'deflate SSE');
  t.same(await meter({ ...SSE, contentEncoding: 'BR' }, ...bytesOf(brotliCompressSync(responsesStream))), usage(1200, 1024, 42), 'br SSE a byte at a time');
  t.same(await meter({ ...JSON_BODY, contentEncoding: 'br' }, brotliCompressSync(JSON.stringify(chatBody))), usage(300, 256, 20), 'br JSON');
  t.same(await meter({ ...JSON_BODY, contentEncoding: 'identity' }, JSON.stringify(chatBody)), usage(300, 256, 20), 'identity is no coding');
  t.equal(await meter({ ...SSE, contentEncoding: 'gzip' }), null, 'an empty gzip body');
});

t.test('a compressed body cut short keeps what was read; one that is not what it says reports none', async (t) => {
  const whole = gzipSync(anthropicStream);
  t.same(await meter({ ...SSE, contentEncoding: 'gzip' }, whole.subarray(0, whole.length - 8)), ANTHROPIC, 'gzip without its trailer');
  const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
  t.equal(await meter({ ...SSE, contentEncoding: 'gzip' }, garbage, frame({ usage: { input_tokens: 1 } })), null, 'not gzip');
  t.equal(await meter({ ...JSON_BODY, contentEncoding: 'br' }, JSON.stringify(chatBody)), null, 'plain text said to be br');
});

t.test('an encoding the meter does not undo reports no usage', async (t) => {
  t.equal(await meter({ ...SSE, contentEncoding: 'zstd' }, anthropicStream), null, 'zstd');
  t.equal(await meter({ ...SSE, contentEncoding: 'gzip, br' }, anthropicStream), null, 'two codings');
});

t.test('malformed lines are passed over and later lines still read', async (t) => {
  const body = [
    'data: {"usage": {"input_tokens": 5\n',
    'data: usage, but not JSON\n',
    Buffer.from([0xff, 0xfe, 0x00, ...Buffer.from('data: usage \u0000'), 0xc3, 0x28, 0x0a]),
    'event: usage\n: usage in a comment\nid: usage\n',
    'data: {"type":"response.completed","response":{"usage":"many"}}\n',
    'data: {"type":"message_start","message":null}\n',
    'data: ["usage"]\n',
    'data: null\n',
    'data: 7 usage\n',
    'data: {"type":"content_block_delta","delta":{"type":"text_delta","text":"the usage was {\\"input_tokens\\": 9}"}}\n\n',
    frame({ type: 'response.completed', response: { usage: RESPONSES_USAGE } }),
  ];
  t.same(await meter(SSE, ...body), usage(1200, 1024, 42));
  t.equal(await meter(JSON_BODY, '{"usage": {"input_tokens": 5'), null, 'a truncated JSON body');
  t.equal(await meter(JSON_BODY, '[1, "usage", null]'), null, 'a JSON array of no usage');
});

t.test('figures that are not token counts count nothing, and the response still counts as a call', async (t) => {
  t.same(await meter(JSON_BODY, '{"usage":{"input_tokens":-3,"output_tokens":1e400,"input_tokens_details":{"cached_tokens":"9"}}}'), usage(0, 0, 0));
  t.same(await meter(JSON_BODY, '{"usage":{"input_tokens":12.7,"output_tokens":2}}'), usage(12, 0, 2));
});

t.test('a body that reports no usage gives null', async (t) => {
  t.equal(await meter(SSE), null, 'an empty body');
  t.equal(await meter(SSE, frame({ type: 'response.created', response: { usage: null } }), 'data: [DONE]\n\n'), null, 'SSE without usage');
  t.equal(await meter(JSON_BODY, JSON.stringify({ error: { code: 429, message: 'rate limited', status: 'RESOURCE_EXHAUSTED' } })), null, 'an error body');
  t.equal(await meter({ contentType: 'text/html' }, JSON.stringify(chatBody)), null, 'a content type that is neither SSE nor JSON');
  t.equal(await meter(JSON_BODY, '   '), null, 'white space');
});

t.test('a body without a content type is told by its first byte', async (t) => {
  t.same(await meter({}, '\r\n ', ...bytesOf(JSON.stringify(chatBody))), usage(300, 256, 20), 'JSON');
  t.same(await meter({ contentType: '' }, '\n', anthropicStream), ANTHROPIC, 'SSE');
  t.same(await meter({ contentType: 'application/problem+json' }, JSON.stringify(anthropicBody)), ANTHROPIC, 'a +json type');
});

t.test('an over-long line is passed over without breaking the lines after it', async (t) => {
  const long = `data: {"usage":{"input_tokens":999,"output_tokens":999},"pad":"${'x'.repeat(MAX_LINE_BYTES)}"}\n`;
  const after = frame({ type: 'response.completed', response: { usage: RESPONSES_USAGE } });
  t.same(await meter(SSE, long + after), usage(1200, 1024, 42), 'the long line inside one chunk');

  const usageMeter = new UsageMeter(SSE);
  const bytes = Buffer.from(long + after);
  let most = 0;
  for (let at = 0; at < bytes.length; at += 65536) {
    usageMeter.write(bytes.subarray(at, at + 65536));
    most = Math.max(most, usageMeter.retainedBytes);
  }
  t.ok(most <= MAX_LINE_BYTES, `at most ${MAX_LINE_BYTES} bytes kept (${most})`);
  t.same(await usageMeter.end(), usage(1200, 1024, 42), 'the long line across many chunks');
  t.equal(usageMeter.retainedBytes, 0, 'nothing kept after the end');
});

t.test('a JSON body over its cap is dropped and reports none', async (t) => {
  const usageMeter = new UsageMeter(JSON_BODY);
  usageMeter.write(Buffer.from(`{"usage":{"input_tokens":1,"output_tokens":1},"pad":"`));
  const pad = Buffer.alloc(1024 * 1024, 'x');
  for (let i = 0; i < MAX_JSON_BYTES / pad.length; i += 1) usageMeter.write(pad);
  t.ok(usageMeter.retainedBytes <= MAX_JSON_BYTES, `kept ${usageMeter.retainedBytes}`);
  usageMeter.write(Buffer.from('"}'));
  t.equal(await usageMeter.end(), null);
  t.equal(usageMeter.retainedBytes, 0);
});

t.test('20 MB of SSE keeps no more than the unfinished line', async (t) => {
  const delta = frame({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'some words of the answer' }, 'response.output_text.delta');
  const block = Buffer.from(delta.repeat(Math.ceil((1024 * 1024) / delta.length)));
  const usageMeter = new UsageMeter(SSE);
  let most = 0;
  let written = 0;
  while (written < 20 * 1024 * 1024) {
    // 64 KiB chunks that cut the frames anywhere.
    for (let at = 0; at < block.length; at += 65536) {
      usageMeter.write(block.subarray(at, at + 65536));
      most = Math.max(most, usageMeter.retainedBytes);
    }
    written += block.length;
  }
  usageMeter.write(Buffer.from(frame({ type: 'response.completed', response: { usage: RESPONSES_USAGE } })));
  t.ok(most < delta.length, `at most ${most} bytes kept, less than one frame of ${delta.length}`);
  t.same(await usageMeter.end(), usage(1200, 1024, 42));
});

t.test('compressed bytes the decompressor has not reached are capped: past the cap the body is dropped', async (t) => {
  const usageMeter = new UsageMeter({ ...SSE, contentEncoding: 'gzip' });
  const piece = Buffer.alloc(1024 * 1024, 0x41);
  let most = 0;
  for (let i = 0; i < MAX_PENDING_BYTES / piece.length + 2; i += 1) {
    usageMeter.write(piece);
    most = Math.max(most, usageMeter.retainedBytes);
  }
  t.ok(most <= MAX_PENDING_BYTES, `at most ${most} bytes waiting`);
  t.equal(usageMeter.retainedBytes, 0, 'dropped');
  t.equal(await usageMeter.end(), null);
});

t.test('end gives one answer however often it is asked, and a chunk after it is ignored', async (t) => {
  const usageMeter = new UsageMeter(SSE);
  usageMeter.write(Buffer.from(anthropicStream));
  const first = usageMeter.end();
  usageMeter.write(Buffer.from(frame({ type: 'message_delta', usage: { output_tokens: 1000 } })));
  t.equal(usageMeter.end(), first);
  t.same(await first, ANTHROPIC);
});

t.test('no input makes it throw or reject: mangled bodies, in any chunking and coding', async (t) => {
  let seed = 42;
  const random = (below: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % below;
  };
  const bodies = [responsesStream, chatStream, geminiStream, anthropicStream, JSON.stringify(responsesBody), JSON.stringify(geminiChunks)].map((body) => Buffer.from(body));
  const headers: MeteredHeaders[] = [SSE, JSON_BODY, {}, { ...SSE, contentEncoding: 'gzip' }, { ...JSON_BODY, contentEncoding: 'br' }, { ...SSE, contentEncoding: 'deflate' }];
  const encode = [(b: Buffer) => b, (b: Buffer) => b, (b: Buffer) => b, gzipSync, brotliCompressSync, deflateSync];
  let answered = 0;
  for (let round = 0; round < 300; round += 1) {
    const kind = random(headers.length);
    const body = Buffer.from(encode[kind]!(bodies[random(bodies.length)]!));
    for (let flips = random(8); flips > 0; flips -= 1) body[random(body.length)] = random(256);
    const cut = body.subarray(0, body.length - random(Math.min(40, body.length)));
    const usageMeter = new UsageMeter(headers[kind]!);
    for (let at = 0; at < cut.length; ) {
      const size = 1 + random(300);
      usageMeter.write(cut.subarray(at, at + size));
      at += size;
    }
    const got = await usageMeter.end();
    if (got === null || Object.values(got).every((n) => Number.isInteger(n) && n >= 0)) answered += 1;
  }
  t.equal(answered, 300, 'every body gave null or whole non-negative counts');
});
