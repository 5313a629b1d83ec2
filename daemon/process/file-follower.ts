import { watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { LineSplitter } from '../../rpc/framing.js';

/** How much of an output file one read takes: at first a little (most reads find a line or nothing), doubling while reads fill it. */
const FIRST_READ_BYTES = 4 * 1024;
const READ_BYTES = 256 * 1024;

/** What a follower reports: each line (or oversized line) once, `replayed` while it re-reads what was reported before a restart. */
export interface FollowSink {
  line(text: string, replayed: boolean): void;
  overflow(bytes: number, replayed: boolean): void;
  /** The raw bytes of what is new (not replayed), as they were read. */
  bytes?(chunk: Buffer): void;
}

/**
 * Reads an engine's output file as the engine appends to it, from its start, and splits it into
 * lines (at most `maxLineBytes` each). The first `skip` lines (overflows included) were reported
 * by an earlier daemon: they are read again, as `replayed`, so that whoever parses the output
 * knows what came before, and the rest is new. Changes are noticed by inotify (`fs.watch`);
 * `finish` reads what is left once the writer is gone.
 */
export class FileFollower {
  readonly #path: string;
  readonly #sink: FollowSink;
  readonly #splitter: LineSplitter;
  #skip: number;
  readonly #ready: Promise<void>;
  #file: FileHandle | null = null;
  #watcher: FSWatcher | null = null;
  #position = 0;
  #readBytes = FIRST_READ_BYTES;
  #reading: Promise<void> | null = null;
  #again = false;
  #closed = false;

  constructor(path: string, maxLineBytes: number, skip: number, sink: FollowSink) {
    this.#path = path;
    this.#sink = sink;
    this.#skip = skip;
    this.#splitter = new LineSplitter(maxLineBytes, {
      line: (text) => this.#sink.line(text, this.#counted()),
      overflow: (bytes) => this.#sink.overflow(bytes, this.#counted()),
    });
    this.#ready = this.#start();
  }

  /** Starts reading at once; what the file holds already is read first. A file that cannot be opened is read as empty. */
  async #start(): Promise<void> {
    try {
      this.#file = await open(this.#path, 'r');
    } catch {
      return;
    }
    if (this.#closed) {
      await this.#file.close();
      this.#file = null;
      return;
    }
    this.#watcher = watch(this.#path, { persistent: false }, () => void this.#pump());
    this.#watcher.on('error', () => undefined);
    await this.#pump();
  }

  /** Reads to the end, reports a last line without its newline, and stops. */
  async finish(): Promise<void> {
    await this.#ready;
    this.#stopWatching();
    await this.#pump();
    await this.#reading;
    if (!this.#closed) this.#splitter.end();
    await this.close();
  }

  /** Stops reading, leaving the rest unread (the daemon is going away). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#ready;
    this.#stopWatching();
    await this.#reading?.catch(() => undefined);
    const file = this.#file;
    this.#file = null;
    await file?.close().catch(() => undefined);
  }

  #stopWatching(): void {
    this.#watcher?.close();
    this.#watcher = null;
  }

  /** One read loop at a time; a change noticed meanwhile makes it go round once more. */
  #pump(): Promise<void> {
    if (this.#reading !== null) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = this.#readAll().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  async #readAll(): Promise<void> {
    do {
      this.#again = false;
      for (;;) {
        const file = this.#file;
        if (file === null || this.#closed) return;
        // A fresh buffer each time: the splitter keeps the parts of a line not yet complete.
        const buffer = Buffer.allocUnsafe(this.#readBytes);
        const { bytesRead } = await file.read(buffer, 0, buffer.length, this.#position);
        if (bytesRead === 0) break;
        this.#position += bytesRead;
        this.#take(buffer.subarray(0, bytesRead));
        this.#readBytes = bytesRead === buffer.length ? Math.min(READ_BYTES, buffer.length * 2) : FIRST_READ_BYTES;
      }
    } while (this.#again);
  }

  /** Feeds the splitter a line at a time, so that the bytes after the replayed lines are told apart. */
  #take(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl + 1;
      const part = chunk.subarray(start, end);
      // Copied before its line is told: whoever hears of the line (a turn's end) finds it in the copy.
      if (this.#skip === 0) this.#sink.bytes?.(part);
      this.#splitter.push(part);
      start = end;
    }
  }

  /** Whether the line being reported now is one an earlier daemon reported. */
  #counted(): boolean {
    if (this.#skip === 0) return false;
    this.#skip -= 1;
    return true;
  }
}
