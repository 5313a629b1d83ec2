import { ReadableStream, WritableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import type { LiveIo } from '../live-session.js';

/**
 * The two byte streams the ACP SDK's `ndJsonStream` reads and writes, over the lines of a live
 * process: `push` feeds it one stdout line, and each message it writes goes to `io.send` as one
 * line (without its newline).
 */
export interface LineStreams {
  readonly input: ReadableStream<Uint8Array>;
  readonly output: WritableStream<Uint8Array>;
  /** One line the engine printed on stdout; ignored after `end` or once the SDK stopped reading. */
  push(line: string): void;
  /** No more lines will come: the SDK sees the end of its input. */
  end(): void;
}

/** Builds the streams; nothing is read or written until the SDK connects to them. */
export function lineStreams(io: LiveIo): LineStreams {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let ended = false;
  const input = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    // The SDK cancels its input when the connection closes: the controller is closed then, and
    // enqueueing or closing it again would throw.
    cancel: () => {
      ended = true;
    },
  });
  return {
    input,
    output: lineWriter(io),
    push: (line) => {
      if (!ended) controller?.enqueue(encoder.encode(`${line}\n`));
    },
    end: () => {
      if (ended) return;
      ended = true;
      controller?.close();
    },
  };
}

/** A byte sink that hands every complete line to `io.send`; a send that throws errors the stream, which closes the connection. */
function lineWriter(io: LiveIo): WritableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let partial = '';
  return new WritableStream<Uint8Array>({
    write: (chunk) => {
      const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) io.send(line);
    },
  });
}
