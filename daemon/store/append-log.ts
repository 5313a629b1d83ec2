import { open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crashPoint } from './crash-points.js';
import { SYNCED_APPEND, appendSynced, syncFolder } from './durable-file.js';
import { asStorageError } from './storage-fault.js';

/** A step that runs while no write is in flight; appends made meanwhile wait behind it. */
interface Exclusive {
  run(): Promise<void>;
}

interface Pending {
  text: string;
  /** Runs once the text is on disk, before anything else can run (a compaction, say). */
  commit: (() => void) | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * An append-only file with group commit: appends that arrive while a write is in flight go out
 * together in the next write, which is synced as it is made (O_DSYNC). Each append resolves once
 * its bytes are on disk. `between` runs after each synced batch, while no write is in flight.
 * A batch is written whole or not at all: when a write fails (a full disk), the file is cut back
 * to its last good size and the batch's appends reject with `STORAGE_UNAVAILABLE`; later appends
 * try again, so the log recovers by itself once there is room.
 */
export class AppendLog {
  readonly path: string;
  #file: FileHandle | null = null;
  #queue: Array<Pending | Exclusive> = [];
  #draining: Promise<void> | null = null;
  #size = 0;
  #between: (() => Promise<void>) | null = null;
  /** A failed write may have left part of its batch after `#size`. */
  #torn = false;

  constructor(path: string) {
    this.path = path;
  }

  /** Opens the file for appending and returns what it holds ('' when it does not exist). */
  async open(): Promise<string> {
    const text = await readFile(this.path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    this.#file = await open(this.path, SYNCED_APPEND, 0o600);
    this.#size = Buffer.byteLength(text);
    return text;
  }

  get size(): number {
    return this.#size;
  }

  /** A task to run between batches (compaction); it may call `truncate` or `cut`. */
  onBetweenBatches(task: () => Promise<void>): void {
    this.#between = task;
  }

  append(text: string, commit?: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ text, commit, resolve, reject });
      this.#draining ??= this.#drain();
    });
  }

  /** Cuts the file to `bytes` (a torn tail at load, or 0 after a compaction). */
  async cut(bytes: number): Promise<void> {
    crashPoint({ step: 'cut', path: this.path });
    await this.#requireOpen().truncate(bytes);
    this.#size = bytes;
  }

  /**
   * Replaces the file with `lines` (each ending in a newline) followed by whatever the file holds
   * from byte `from` on: what was appended after the caller took its picture of the file. The new
   * content is written and synced beside the file first, while appends go on; they wait only for
   * the copy of that tail and the rename. When anything fails the file is left as it was.
   */
  async rewrite(lines: Iterable<string>, from: number): Promise<void> {
    const temp = join(dirname(this.path), `.${basename(this.path)}.rewrite`);
    const target = await open(temp, 'w', 0o600);
    try {
      let chunk: string[] = [];
      let chunkBytes = 0;
      for (const line of lines) {
        chunk.push(line);
        chunkBytes += line.length;
        if (chunkBytes < 1 << 20) continue;
        await appendSynced(target, chunk.join(''));
        chunk = [];
        chunkBytes = 0;
      }
      await appendSynced(target, chunk.join(''));
      await this.#exclusive(async () => {
        await appendSynced(target, await this.#readRange(from, this.#size));
        await target.sync();
        crashPoint({ step: 'rename', path: this.path });
        await rename(temp, this.path);
        await syncFolder(dirname(this.path));
        const old = this.#requireOpen();
        this.#file = await open(this.path, SYNCED_APPEND, 0o600);
        this.#size = (await this.#file.stat()).size;
        this.#torn = false;
        await old.close().catch(() => undefined);
      });
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw asStorageError(error, this.path);
    } finally {
      await target.close().catch(() => undefined);
    }
  }

  /** The file's text from byte `start` to `end` (whole lines: both are sizes it had). */
  async #readRange(start: number, end: number): Promise<string> {
    if (end <= start) return '';
    const reader = await open(this.path, 'r');
    try {
      const bytes = Buffer.alloc(end - start);
      let at = 0;
      while (at < bytes.length) {
        const { bytesRead } = await reader.read(bytes, at, bytes.length - at, start + at);
        if (bytesRead === 0) throw new Error(`${this.path} ended before byte ${end}`);
        at += bytesRead;
      }
      return bytes.toString('utf8');
    } finally {
      await reader.close();
    }
  }

  /** Runs `task` between batches, with no write in flight; appends made meanwhile go after it. */
  #exclusive(task: () => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ run: () => task().then(resolve, reject) });
      this.#draining ??= this.#drain();
    });
  }

  /** Resolves once every append made so far is on disk. */
  async flushed(): Promise<void> {
    await this.#draining;
  }

  async close(): Promise<void> {
    await this.#draining;
    await this.#file?.close();
    this.#file = null;
  }

  /**
   * Writes batches until the queue is empty. `#draining` is cleared in the same step as the last
   * look at the queue: an append that comes after it starts a new drain, never waits on a
   * finished one.
   */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const step = this.#queue[0] as Pending | Exclusive;
        if ('run' in step) {
          this.#queue.shift();
          await step.run();
          continue;
        }
        const end = this.#queue.findIndex((item) => 'run' in item);
        await this.#writeBatch(this.#queue.splice(0, end === -1 ? this.#queue.length : end) as Pending[]);
      }
    } finally {
      this.#draining = null;
    }
  }

  async #writeBatch(batch: Pending[]): Promise<void> {
    const text = batch.map((p) => p.text).join('');
    try {
      const file = this.#requireOpen();
      if (this.#torn) await this.#cutTorn(file);
      crashPoint({ step: 'append', path: this.path, text });
      await appendSynced(file, text);
      this.#size += Buffer.byteLength(text);
    } catch (error) {
      this.#torn = true;
      await this.#cutTorn(this.#file).catch(() => undefined);
      const failure = asStorageError(error, this.path);
      for (const p of batch) p.reject(failure);
      return;
    }
    for (const p of batch) p.commit?.();
    for (const p of batch) p.resolve();
    if (this.#between !== null) await this.#between().catch(() => undefined);
  }

  async #cutTorn(file: FileHandle | null): Promise<void> {
    if (file === null) return;
    await file.truncate(this.#size);
    this.#torn = false;
  }

  #requireOpen(): FileHandle {
    if (this.#file === null) throw new Error(`${this.path} is not open`);
    return this.#file;
  }
}
