import { RpcCallError, RpcClient } from '../../rpc/client.js';

/**
 * The MCP server's connection to the daemon. A connection that drops (the daemon restarted) is
 * made again at the next request, so the server outlives the daemon; each new connection asks for
 * `skills/changed` again and reports that skills may have changed while it was away.
 */
export class DaemonLink {
  readonly socket: string;
  readonly #onSkillsChanged: () => void;
  #current: RpcClient | null = null;
  #connecting: Promise<RpcClient> | null = null;
  #closed = false;

  /** `first` is already connected; `onSkillsChanged` runs on each `skills/changed` and after each reconnection. */
  constructor(first: RpcClient, socket: string, onSkillsChanged: () => void) {
    this.socket = socket;
    this.#onSkillsChanged = onSkillsChanged;
    this.#adopt(first);
  }

  /** Asks the daemon to send `skills/changed` on the connection; resolves once it has agreed. */
  async start(): Promise<void> {
    await subscribeSkills(await this.client());
  }

  /** A connected client: the current one, or a new one (rejects with DaemonUnreachableError when the daemon is not there). */
  client(): Promise<RpcClient> {
    if (this.#current !== null) return Promise.resolve(this.#current);
    this.#connecting ??= this.#reconnect().finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  close(): void {
    this.#closed = true;
    this.#current?.close();
  }

  async #reconnect(): Promise<RpcClient> {
    const client = await RpcClient.connect(this.socket);
    if (this.#closed) {
      client.close();
      throw new Error('the connection to the daemon was closed');
    }
    this.#adopt(client);
    await subscribeSkills(client);
    this.#onSkillsChanged();
    return client;
  }

  #adopt(client: RpcClient): void {
    this.#current = client;
    client.on('skills/changed', () => this.#onSkillsChanged());
    client.onClose(() => {
      if (this.#current === client) this.#current = null;
    });
  }
}

/** `skills/subscribe`; a daemon too old to have it sends no `skills/changed`, and the tool list is then only read when asked for. */
async function subscribeSkills(client: RpcClient): Promise<void> {
  try {
    await client.request('skills/subscribe');
  } catch (error) {
    if (!(error instanceof RpcCallError && error.dataCode === 'METHOD_NOT_FOUND')) throw error;
  }
}
