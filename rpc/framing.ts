/**
 * NDJSON framing: splits a byte stream into lines with a per-line byte cap. Splitting happens on
 * raw bytes (0x0A never occurs inside a multi-byte UTF-8 sequence), and a line is decoded only
 * once it is complete, so characters split across chunk boundaries decode correctly.
 */

/** 1 MiB: the largest line the socket accepts. */
export const MAX_RPC_LINE_BYTES = 1024 * 1024;

/** Bytes kept of each end of an oversized line, for a sink that reads them. */
export const LINE_EDGE_BYTES = 1024;

/** What is kept of an oversized line: its first and last `LINE_EDGE_BYTES`, decoded, and its length. */
export interface LineEdges {
  head: string;
  tail: string;
  bytes: number;
}

export interface LineSink {
  /** A complete line, without its terminator (a trailing `\r` is removed too). */
  line(text: string): void;
  /** A line grew past the cap (called once, as it crosses); its bytes up to the next newline are dropped. */
  overflow(bytesSeen: number): void;
  /** An oversized line ended (its newline, or the end of the stream): what is kept of it. Optional. */
  oversized?(edges: LineEdges): void;
}

export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #sink: LineSink;
  #parts: Buffer[] = [];
  #size = 0;
  #overflowing = false;
  #head: Buffer = Buffer.alloc(0);
  #tail: Buffer = Buffer.alloc(0);

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
    if (this.#overflowing) {
      if (this.#sink.oversized !== undefined) this.#tail = lastBytes([this.#tail, bytes], LINE_EDGE_BYTES);
      return;
    }
    this.#parts.push(bytes);
    if (this.#size > this.#maxLineBytes) {
      this.#overflowing = true;
      if (this.#sink.oversized !== undefined) {
        this.#head = Buffer.concat(this.#parts, Math.min(LINE_EDGE_BYTES, this.#size));
        this.#tail = lastBytes(this.#parts, LINE_EDGE_BYTES);
      }
      this.#parts = [];
      this.#sink.overflow(this.#size);
    }
  }

  #finishLine(): void {
    if (this.#overflowing) {
      const edges = { head: this.#head.toString('utf8'), tail: this.#tail.toString('utf8'), bytes: this.#size };
      this.#reset();
      this.#sink.oversized?.(edges);
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
    this.#head = this.#tail = Buffer.alloc(0);
  }
}

/** The last `count` bytes of `parts` taken as one. */
function lastBytes(parts: readonly Buffer[], count: number): Buffer {
  const kept: Buffer[] = [];
  let size = 0;
  for (let i = parts.length - 1; i >= 0 && size < count; i -= 1) {
    const part = parts[i] as Buffer;
    const taken = part.subarray(Math.max(0, part.length - (count - size)));
    kept.unshift(taken);
    size += taken.length;
  }
  return Buffer.concat(kept, size);
}

/** A byte limit as people read it and as it is counted: `1 MiB (1048576 bytes)`. */
export function limitText(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB (${bytes} bytes)`;
}

/** One message as a wire line. */
export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
