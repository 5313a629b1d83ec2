import { open, readFile, type FileHandle } from 'node:fs/promises';
import { SYNCED_APPEND, appendSynced } from './durable-file.js';

interface Pending {
  text: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * An append-only file with group commit: appends that arrive while a write is in flight go out
 * together in the next write, which is synced as it is made (O_DSYNC). Each append resolves once
 * its bytes are on disk. `between` runs after each synced batch, while no write is in flight.
 */
export class AppendLog {
  readonly path: string;
  #file: FileHandle | null = null;
  #queue: Pending[] = [];
  #draining: Promise<void> | null = null;
  #size = 0;
  #between: (() => Promise<void>) | null = null;

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

  append(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ text, resolve, reject });
      this.#draining ??= this.#drain().finally(() => {
        this.#draining = null;
      });
    });
  }

  /** Cuts the file to `bytes` (a torn tail at load, or 0 after a compaction). */
  async cut(bytes: number): Promise<void> {
    await this.#requireOpen().truncate(bytes);
    this.#size = bytes;
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

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0);
      const text = batch.map((p) => p.text).join('');
      try {
        const file = this.#requireOpen();
        await appendSynced(file, text);
        this.#size += Buffer.byteLength(text);
        for (const p of batch) p.resolve();
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
      if (this.#between !== null) await this.#between().catch(() => undefined);
    }
  }

  #requireOpen(): FileHandle {
    if (this.#file === null) throw new Error(`${this.path} is not open`);
    return this.#file;
  }
}
