/**
 * NDJSON framing: splits a byte stream into lines with a per-line byte cap. Splitting happens on
 * raw bytes (0x0A never occurs inside a multi-byte UTF-8 sequence), and a line is decoded only
 * once it is complete, so characters split across chunk boundaries decode correctly.
 */

/** 1 MiB: the largest line the socket accepts. */
export const MAX_RPC_LINE_BYTES = 1024 * 1024;

export interface LineSink {
  /** A complete line, without its terminator (a trailing `\r` is removed too). */
  line(text: string): void;
  /** A line grew past the cap (called once, as it crosses); its bytes up to the next newline are dropped. */
  overflow(bytesSeen: number): void;
}

export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #sink: LineSink;
  #parts: Buffer[] = [];
  #size = 0;
  #overflowing = false;

  constructor(maxLineBytes: number, sink: LineSink) {
    this.#maxLineBytes = maxLineBytes;
    this.#sink = sink;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.#take(chunk.subarray(start, end));
      if (nl === -1) return;
      this.#finishLine();
      start = nl + 1;
    }
  }

  /** Bytes held of the line not yet complete (none while an oversized line is being skipped). */
  get buffered(): number {
    return this.#overflowing ? 0 : this.#size;
  }

  /** Flushes a last line that had no terminator (end of stream). */
  end(): void {
    if (this.#size > 0 || this.#overflowing) this.#finishLine();
  }

  #take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#size += bytes.length;
    if (this.#overflowing) return;
    if (this.#size > this.#maxLineBytes) {
      this.#overflowing = true;
      this.#parts = [];
      this.#sink.overflow(this.#size);
      return;
    }
    this.#parts.push(bytes);
  }

  #finishLine(): void {
    if (this.#overflowing) {
      this.#reset();
      return;
    }
    let text = Buffer.concat(this.#parts, this.#size).toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    this.#reset();
    this.#sink.line(text);
  }

  #reset(): void {
    this.#parts = [];
    this.#size = 0;
    this.#overflowing = false;
  }
}

/** A byte limit as people read it and as it is counted: `1 MiB (1048576 bytes)`. */
export function limitText(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB (${bytes} bytes)`;
}

/** One message as a wire line. */
export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
