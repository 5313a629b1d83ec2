import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { NotifyEvent } from '../base/config-notify.js';
import { AppendLog } from '../store/append-log.js';

/** One delivery: an event for one webhook, kept until it is delivered or given up. */
export interface Delivery {
  /** Sent as `X-Skilld-Delivery` on each of its attempts. */
  id: string;
  /** Its webhook, by `hookKey` (the URL may hold credentials, and is not stored). */
  hook: string;
  /** The webhook's URL as it may be shown (`shownUrl`). */
  url: string;
  event: NotifyEvent;
  job_id: string;
  /** The body every attempt sends, byte for byte: the signature covers it. */
  body: string;
  created_at: string;
  /** No attempt starts after this: the event plus the webhook's `retry_for`. */
  expires_at: string;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due. */
  next_at: string;
}

/** What became of one attempt (`notify/log`). */
export type AttemptOutcome = 'delivered' | 'retrying' | 'given_up';

/** One attempt as `notify/log` shows it and the outbox keeps it. */
export interface AttemptRecord {
  delivery_id: string;
  url: string;
  event: NotifyEvent;
  job_id: string;
  /** 1 for the first; a delivery given up without another try (its webhook left the config) repeats its last number. */
  attempt: number;
  at: string;
  /** The receiver's status code, or null when there was none (`error` says why). */
  status: number | null;
  error: string | null;
  /** When the next attempt is due; null once delivered or given up. */
  next_at: string | null;
  outcome: AttemptOutcome;
}

/** How many attempts the outbox keeps for `notify/log`, however many deliveries it has seen. */
export const KEPT_ATTEMPTS = 200;

/** The file is rewritten with what is still live once it is larger than this and than twice what is live. */
const COMPACT_MIN_BYTES = 256 * 1024;

type Line = { delivery: Delivery } | { attempt: AttemptRecord };

/**
 * The deliveries not yet delivered nor given up, and the last attempts, in one append-only file
 * (`<state_dir>/notify/outbox.ndjson`): a delivery is on disk (synced) before its first attempt,
 * and so is each attempt's outcome before the next is scheduled. Delivered and given-up
 * deliveries are dropped when the file is rewritten, which happens in the background once most
 * of it is dead; attempts beyond the last KEPT_ATTEMPTS go then too.
 */
export class Outbox {
  readonly #log: AppendLog;
  readonly #pending = new Map<string, Delivery>();
  /** The size of each owed delivery's stored line, to tell how much of the file is live. */
  readonly #pendingSizes = new Map<string, number>();
  /** The last attempts, oldest first, each with its line's size. */
  readonly #recent: Array<{ record: AttemptRecord; bytes: number }> = [];
  #recentBytes = 0;
  #pendingBytes = 0;
  #rewriting: Promise<void> | null = null;
  readonly #compactAtBytes: number;
  /** Lines that could not be read at open (a damaged file), skipped. */
  skipped = 0;

  private constructor(path: string, compactAtBytes: number) {
    this.#log = new AppendLog(path);
    this.#compactAtBytes = compactAtBytes;
  }

  /** Opens (or creates) the outbox in `dir`, made 0700 if missing. */
  static async open(dir: string, options: { compactAtBytes?: number } = {}): Promise<Outbox> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const outbox = new Outbox(join(dir, 'outbox.ndjson'), options.compactAtBytes ?? COMPACT_MIN_BYTES);
    await outbox.#load();
    return outbox;
  }

  async #load(): Promise<void> {
    const text = await this.#log.open();
    const lines = text.split('\n');
    const torn = lines.pop() ?? '';
    for (const line of lines) if (line !== '' && !this.#take(line)) this.skipped += 1;
    // A last line without its newline was cut short by a crash: its write never returned, so nothing relied on it.
    if (torn !== '') await this.#log.cut(Buffer.byteLength(text) - Buffer.byteLength(torn));
  }

  /** Takes in one stored line; false when it is not one. */
  #take(text: string): boolean {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      return false;
    }
    if (typeof line !== 'object' || line === null) return false;
    if ('delivery' in line && typeof line.delivery?.id === 'string') this.#keep(line.delivery, Buffer.byteLength(text) + 1);
    else if ('attempt' in line && typeof line.attempt?.delivery_id === 'string') this.#apply(line.attempt, Buffer.byteLength(text) + 1);
    else return false;
    return true;
  }

  #keep(delivery: Delivery, bytes: number): void {
    this.#drop(delivery.id);
    this.#pending.set(delivery.id, delivery);
    this.#pendingSizes.set(delivery.id, bytes);
    this.#pendingBytes += bytes;
  }

  #drop(id: string): void {
    this.#pending.delete(id);
    this.#pendingBytes -= this.#pendingSizes.get(id) ?? 0;
    this.#pendingSizes.delete(id);
  }

  #apply(record: AttemptRecord, bytes: number): void {
    this.#recent.push({ record, bytes });
    this.#recentBytes += bytes;
    while (this.#recent.length > KEPT_ATTEMPTS) this.#recentBytes -= this.#recent.shift()?.bytes ?? 0;
    const delivery = this.#pending.get(record.delivery_id);
    if (delivery === undefined) return;
    if (record.outcome !== 'retrying' || record.next_at === null) {
      this.#drop(record.delivery_id);
      return;
    }
    // An older attempt read after the delivery's own line (a rewritten file keeps attempts first) changes nothing.
    if (record.attempt < delivery.attempts) return;
    delivery.attempts = record.attempt;
    delivery.next_at = record.next_at;
  }

  /** The deliveries still owed, as they stand (copies). */
  pending(): Delivery[] {
    return [...this.#pending.values()].map((delivery) => ({ ...delivery }));
  }

  get(id: string): Delivery | undefined {
    const delivery = this.#pending.get(id);
    return delivery === undefined ? undefined : { ...delivery };
  }

  /** The last `limit` attempts, oldest first. */
  recent(limit: number): AttemptRecord[] {
    return this.#recent.slice(Math.max(this.#recent.length - limit, 0)).map(({ record }) => ({ ...record }));
  }

  /** Stores a new delivery; on disk when this resolves. */
  async add(delivery: Delivery): Promise<void> {
    const line = `${JSON.stringify({ delivery })}\n`;
    await this.#log.append(line, () => this.#keep({ ...delivery }, Buffer.byteLength(line)));
  }

  /** Stores an attempt's outcome (a delivery delivered or given up is done with); on disk when this resolves. */
  async record(attempt: AttemptRecord): Promise<void> {
    const line = `${JSON.stringify({ attempt })}\n`;
    await this.#log.append(line, () => this.#apply({ ...attempt }, Buffer.byteLength(line)));
    this.#compactIfDead();
  }

  /** The file's size: what the tests of compaction look at. */
  get bytes(): number {
    return this.#log.size;
  }

  #compactIfDead(): void {
    const live = this.#recentBytes + this.#pendingBytes;
    if (this.#rewriting !== null || this.#log.size <= this.#compactAtBytes || this.#log.size <= 2 * live) return;
    this.#rewriting = this.compact().finally(() => (this.#rewriting = null));
    // A rewrite that fails (a full disk) leaves the file as it was; the next attempt's record tries again.
    this.#rewriting.catch(() => undefined);
  }

  /**
   * Rewrites the file with what is live: the kept attempts first, then each delivery still owed
   * as it stands now, so that reading it back gives the same. What is appended meanwhile is kept
   * after them.
   */
  async compact(): Promise<void> {
    const from = this.#log.size;
    const lines = [
      ...this.#recent.map(({ record }) => `${JSON.stringify({ attempt: record })}\n`),
      ...[...this.#pending.values()].map((delivery) => `${JSON.stringify({ delivery })}\n`),
    ];
    await this.#log.rewrite(lines, from);
  }

  async close(): Promise<void> {
    await this.#rewriting?.catch(() => undefined);
    await this.#log.close();
  }
}
