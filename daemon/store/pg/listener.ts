import pg from 'pg';
import type { Clock, Timer } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5000;

/**
 * One connection that LISTENs on the store's channels, kept open: when it breaks (the server
 * restarted, the network failed) it is opened again, with a growing pause, and `onConnected` runs
 * after each (re)connection, since what was announced while it was away was not heard.
 */
export class Listener {
  readonly #url: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #handlers: ReadonlyMap<string, (payload: string) => void>;
  readonly #onConnected: () => void;
  #client: pg.Client | null = null;
  #retry: Timer | null = null;
  #pauseMs = FIRST_RETRY_MS;
  #closed = false;

  constructor(url: string, clock: Clock, logger: Logger, handlers: ReadonlyMap<string, (payload: string) => void>, onConnected: () => void) {
    this.#url = url;
    this.#clock = clock;
    this.#logger = logger;
    this.#handlers = handlers;
    this.#onConnected = onConnected;
  }

  /** The first connection; a failure here is the caller's (start-up stops). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#retry?.cancel();
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: 5000 });
    // Without a listener an `error` event would end the process; a broken connection is replaced.
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, null));
    client.on('notification', (message) => this.#handlers.get(message.channel)?.(message.payload ?? ''));
    try {
      await client.connect();
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#pauseMs = FIRST_RETRY_MS;
    this.#onConnected();
  }

  #lost(client: pg.Client, error: Error | null): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = null;
    this.#logger.warn({ err: error ?? undefined }, 'the database connection that hears other hosts broke; opening it again');
    client.end().catch(() => undefined);
    this.#again();
  }

  #again(): void {
    const pause = this.#pauseMs;
    this.#pauseMs = Math.min(this.#pauseMs * 2, LAST_RETRY_MS);
    this.#retry = this.#clock.setTimer(pause, () => {
      this.#retry = null;
      if (this.#closed) return;
      this.#connect().catch(() => this.#again());
    });
  }
}
