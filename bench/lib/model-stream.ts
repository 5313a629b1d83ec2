/**
 * The answer P14's stand-in provider streams: Anthropic's Messages event stream as Claude Code
 * receives it (`message_start` with the input's usage, one `content_block_delta` per piece of
 * text, `message_delta` with the output's usage, `message_stop`), each delta frame of the size a
 * real one has (about 200 bytes), so that the gateway's usage meter reads an ordinary stream: the
 * word `usage` in the first and the last frames alone.
 */

/** The input tokens the answer reports; its output tokens are its delta frames' count. */
export const INPUT_TOKENS = 1234;

const HEAD = frame('message_start', {
  type: 'message_start',
  message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'bench', content: [], stop_reason: null, usage: { input_tokens: INPUT_TOKENS, output_tokens: 1 } },
}) + frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });

const TEXT = 'The quick brown fox jumps over the lazy dog, then reads the next line of the file and';
const DELTA = frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ` ${TEXT}` } });

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function tail(outputTokens: number): string {
  return (
    frame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
    frame('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } }) +
    frame('message_stop', { type: 'message_stop' })
  );
}

/** The bytes of one delta frame. */
export const DELTA_BYTES = Buffer.byteLength(DELTA);

/** How an answer of at least `bytes` bytes is made: its head, delta frames and tail, and its exact length. */
export interface StreamPlan {
  head: Buffer;
  deltas: number;
  tail: Buffer;
  bytes: number;
}

export function planStream(bytes: number): StreamPlan {
  const head = Buffer.from(HEAD);
  const fixed = head.length + Buffer.byteLength(tail(0));
  const deltas = Math.max(1, Math.ceil((bytes - fixed) / DELTA_BYTES));
  const end = Buffer.from(tail(deltas));
  return { head, deltas, tail: end, bytes: head.length + deltas * DELTA_BYTES + end.length };
}

/** `count` delta frames in one buffer: what the provider writes at once. */
export function deltaBlock(count: number): Buffer {
  return Buffer.from(DELTA.repeat(count));
}
