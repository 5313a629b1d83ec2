import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Usage } from '../model/usage.js';
import { ProviderUsage } from './provider-usage.js';

/**
 * Reads the usage a model provider reports in one HTTP response body, as the gateway passes that
 * body on: the meter is given the same chunks, reads them and keeps nothing it does not need, so
 * that the engine receives the provider's bytes exactly as sent and metering costs little even on
 * a stream of many megabytes. It never throws, whatever the body holds: a body it cannot read
 * reports no usage, and the response is unharmed.
 *
 * SSE bodies (`text/event-stream`) are read line by line, and only a `data:` line containing the
 * word `usage` is parsed at all (that catches Gemini's `usageMetadata` too): the bytes of every
 * other line are only searched, never decoded. At most one unfinished line is kept. A JSON body is
 * kept whole, to a cap, and parsed at its end. A compressed body is decompressed on the side for
 * reading, the chunks given to the gateway's own stream being left as they are.
 */

/** The longest SSE line read; a longer one, held back no further, is passed over up to its end. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** The longest JSON body read; past it the body is dropped and reports no usage. */
export const MAX_JSON_BYTES = 4 * 1024 * 1024;
/**
 * Compressed bytes given to the decompressor and not yet read by it: it works off the event loop,
 * and were the body to come far faster than it decodes, its queue would grow without end. Past
 * this the meter stops reading that body; what it read before stands.
 */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024;

/** The response headers that say how its body is to be read; Node's header values fit as they are. */
export interface MeteredHeaders {
  contentType?: string | undefined;
  contentEncoding?: string | undefined;
}

/** How the body is read: undecided until its first byte (no content type), or not at all. */
type Shape = 'sse' | 'json' | 'sniff' | 'none';

const LF = 0x0a;
const MARKER = Buffer.from('usage');
const DATA = Buffer.from('data:');

export class UsageMeter {
  readonly #usage = new ProviderUsage();
  #shape: Shape;
  #decoder: Transform | null = null;
  #ended: Promise<Usage | null> | null = null;
  /** SSE: the pieces of the unfinished line, and whether a line too long is being passed over. */
  #line: Buffer[] = [];
  #lineBytes = 0;
  #skipping = false;
  /** JSON: the body so far. */
  #body: Buffer[] = [];
  #bodyBytes = 0;

  constructor(headers: MeteredHeaders) {
    this.#shape = shapeOf(headers.contentType);
    const coding = codingOf(headers.contentEncoding);
    if (coding === null) this.#shape = 'none';
    else if (coding !== 'identity' && this.#shape !== 'none') {
      const decoder = DECODERS[coding]();
      decoder.on('data', (chunk: Buffer) => this.#guard(() => this.#read(chunk)));
      // A body that is not what its encoding says, or cut short: what was read before stands.
      decoder.on('error', () => this.#stop());
      this.#decoder = decoder;
    }
  }

  /** The bytes the meter holds for now: the unfinished line or the JSON body, and what waits to be decompressed. */
  get retainedBytes(): number {
    return this.#lineBytes + this.#bodyBytes + (this.#decoder?.writableLength ?? 0);
  }

  /** Reads the next chunk of the body, as received (still compressed, if it is). The chunk is not changed; a chunk after `end` is ignored. */
  write(chunk: Buffer): void {
    if (this.#ended !== null || this.#shape === 'none' || chunk.length === 0) return;
    const decoder = this.#decoder;
    if (decoder === null) return this.#guard(() => this.#read(chunk));
    if (decoder.writableLength + chunk.length > MAX_PENDING_BYTES) return this.#stop();
    this.#guard(() => decoder.write(chunk));
  }

  /**
   * The usage the whole body reported, as one model call (`requests: 1`); null when it reported
   * none or could not be read. Resolves once a compressed body has been decoded to its end, and
   * never rejects; calling it again gives the same answer.
   */
  end(): Promise<Usage | null> {
    this.#ended ??= this.#finish();
    return this.#ended;
  }

  async #finish(): Promise<Usage | null> {
    const decoder = this.#decoder;
    if (decoder !== null && !decoder.destroyed) {
      await new Promise<void>((resolve) => {
        decoder.once('end', resolve).once('close', resolve).once('error', () => resolve());
        this.#guard(() => decoder.end());
      });
    }
    this.#guard(() => this.#readLast());
    this.#stop();
    return this.#usage.usage();
  }

  /** Reads decoded bytes. */
  #read(chunk: Buffer): void {
    if (this.#shape === 'sniff') chunk = this.#sniff(chunk);
    if (this.#shape === 'sse') this.#readLines(chunk);
    else if (this.#shape === 'json') this.#keepBody(chunk);
  }

  /** A body of no content type is JSON if it opens with `{` or `[`, else taken for SSE. */
  #sniff(chunk: Buffer): Buffer {
    const start = chunk.findIndex((byte) => byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== LF);
    if (start === -1) return chunk.subarray(chunk.length);
    this.#shape = chunk[start] === 0x7b || chunk[start] === 0x5b ? 'json' : 'sse';
    return chunk.subarray(start);
  }

  /**
   * Splits SSE text into lines (LF, or CRLF: the CR is JSON white space). The complete lines
   * between the chunk's first and last line end are searched for the marker as one block, so a
   * chunk without it costs two scans.
   */
  #readLines(chunk: Buffer): void {
    const first = chunk.indexOf(LF);
    if (first === -1) return this.#keepLine(chunk);
    this.#keepLine(chunk.subarray(0, first));
    const line = this.#takeLine();
    if (line !== null) this.#readLine(line);
    const last = chunk.lastIndexOf(LF);
    const marker = last > first ? chunk.indexOf(MARKER, first + 1) : -1;
    if (marker !== -1 && marker < last) {
      for (let start = first + 1; start <= last; ) {
        const end = chunk.indexOf(LF, start);
        this.#readLine(chunk.subarray(start, end));
        start = end + 1;
      }
    }
    this.#keepLine(chunk.subarray(last + 1));
  }

  /** Keeps a piece of the unfinished line (copied: a view would keep the caller's whole chunk alive), unless it grows too long. */
  #keepLine(piece: Buffer): void {
    if (this.#skipping || piece.length === 0) return;
    if (this.#lineBytes + piece.length > MAX_LINE_BYTES) {
      this.#skipping = true;
      this.#line = [];
      this.#lineBytes = 0;
      return;
    }
    this.#line.push(Buffer.from(piece));
    this.#lineBytes += piece.length;
  }

  /** The line just ended, and a fresh start for the next; null for a line passed over as too long. */
  #takeLine(): Buffer | null {
    const line = this.#skipping ? null : this.#line.length === 1 ? this.#line[0]! : Buffer.concat(this.#line, this.#lineBytes);
    this.#line = [];
    this.#lineBytes = 0;
    this.#skipping = false;
    return line;
  }

  /** Reads one line: only a `data:` line that can carry usage is decoded and parsed. */
  #readLine(line: Buffer): void {
    if (line.length > MAX_LINE_BYTES || line.indexOf(MARKER) === -1) return;
    if (line.length < DATA.length || line.compare(DATA, 0, DATA.length, 0, DATA.length) !== 0) return;
    const message = parse(line.subarray(DATA.length).toString('utf8'));
    this.#usage.read(message);
  }

  /** Keeps a piece of the JSON body (copied, as a line's pieces are). */
  #keepBody(chunk: Buffer): void {
    if (this.#bodyBytes + chunk.length > MAX_JSON_BYTES) return this.#stop();
    this.#body.push(Buffer.from(chunk));
    this.#bodyBytes += chunk.length;
  }

  /** At the body's end: the SSE line left unfinished (a body need not end in a line end), or the JSON body. */
  #readLast(): void {
    if (this.#shape === 'sse') {
      const line = this.#takeLine();
      if (line !== null && line.length > 0) this.#readLine(line);
    } else if (this.#shape === 'json' && this.#body.length > 0) {
      const body = Buffer.concat(this.#body, this.#bodyBytes);
      if (body.indexOf(MARKER) === -1) return;
      const message = parse(body.toString('utf8'));
      for (const part of Array.isArray(message) ? message : [message]) this.#usage.read(part);
    }
  }

  /** Stops reading the body and lets go of what was kept of it; usage already read stands. */
  #stop(): void {
    this.#shape = 'none';
    this.#line = [];
    this.#lineBytes = 0;
    this.#body = [];
    this.#bodyBytes = 0;
    const decoder = this.#decoder;
    this.#decoder = null;
    decoder?.destroy();
  }

  /** Runs `step`; should it throw after all, the meter stops, so that no fault of its own can reach the response. */
  #guard(step: () => void): void {
    try {
      step();
    } catch {
      this.#stop();
    }
  }
}

/** The value of a JSON text, or undefined for text that is not JSON. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function shapeOf(contentType: string | undefined): Shape {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type === '') return 'sniff';
  if (type === 'text/event-stream') return 'sse';
  return type === 'application/json' || type.endsWith('+json') ? 'json' : 'none';
}

type Coding = 'identity' | 'gzip' | 'deflate' | 'br';

/**
 * The one coding a body was compressed with; null for an unknown one, or several at once, which
 * the providers do not send and the meter does not undo (such a body reports no usage).
 */
function codingOf(contentEncoding: string | undefined): Coding | null {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return 'identity';
  if (codings.length > 1) return null;
  const coding = codings[0] === 'x-gzip' ? 'gzip' : codings[0];
  return coding === 'gzip' || coding === 'deflate' || coding === 'br' ? coding : null;
}

const DECODERS: Record<Exclude<Coding, 'identity'>, () => Transform> = {
  gzip: createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};
