import { setTimeout as delay } from 'node:timers/promises';
import { DaemonUnreachableError, RpcClient } from '../rpc/client.js';

/** How often a lost daemon is tried again, and for how long before a command gives up (exit 3). */
export const RECONNECT_EVERY_MS = 250;
export const RECONNECT_FOR_MS = 5 * 60_000;

/**
 * skillctl's connection to the daemon, which a command that follows a job may make again when the
 * daemon restarts (docs/restarts.md): `client` always speaks through the current connection.
 */
export class ClientLink {
  readonly client: RpcClient;
  readonly #socket: string;
  #current: RpcClient;
  #closed = false;

  constructor(first: RpcClient, socket: string) {
    this.#socket = socket;
    this.#current = first;
    this.client = new Proxy(first, {
      get: (_target, key) => {
        const value: unknown = Reflect.get(this.#current, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(this.#current) : value;
      },
    });
  }

  /**
   * Connects again, trying every RECONNECT_EVERY_MS for RECONNECT_FOR_MS; resolves true once the
   * daemon answers, false when `signal` aborts first. Throws the last DaemonUnreachableError when
   * the daemon does not come back. A connection counts once the daemon has answered a ping: a
   * daemon that is still going away (its listening socket not yet closed as its process ends) may
   * take a connection and then reset it.
   */
  async reconnect(signal?: AbortSignal): Promise<boolean> {
    const until = Date.now() + RECONNECT_FOR_MS;
    for (;;) {
      if (signal?.aborted === true || this.#closed) return false;
      try {
        const client = await RpcClient.connect(this.#socket);
        try {
          await client.request('daemon/ping');
        } catch (error) {
          client.close();
          throw error;
        }
        this.#current.close();
        this.#current = client;
        return true;
      } catch (error) {
        if (!(error instanceof DaemonUnreachableError) || Date.now() > until) throw error;
      }
      await delay(RECONNECT_EVERY_MS, undefined, { signal }).catch(() => undefined);
    }
  }

  close(): void {
    this.#closed = true;
    this.#current.close();
  }
}
