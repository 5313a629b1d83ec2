import { addUsage, type Usage } from '../model/usage.js';
import type { ProviderFailure } from './gateway.js';
import type { GatewayEngineSetup } from './gateway-env.js';

/**
 * What the gateway of one running job has seen since it was last asked: what its calls used, and
 * a provider's answer that ends the job. The launcher takes both at each turn's end, and stops a
 * turn as soon as a failure is told (the real engines would retry a refused key for minutes).
 */
export class JobGateway {
  /** What the engine is given to call through the gateway (gateway-env.ts); null for an engine an earlier daemon started, which has it. */
  readonly setup: GatewayEngineSetup | null;
  #usage: Usage | null = null;
  #failure: ProviderFailure | null = null;
  readonly #reading = new Set<Promise<void>>();
  readonly #listeners = new Set<(failure: ProviderFailure) => void>();

  constructor(setup: GatewayEngineSetup | null) {
    this.setup = setup;
  }

  /** A call's usage, added once its answer has been read to the end (a compressed one is decoded on the side). */
  used(usage: Promise<Usage>): void {
    const counted = usage.then((used) => {
      this.#usage = addUsage(this.#usage, used);
    });
    this.#reading.add(counted);
    void counted.finally(() => this.#reading.delete(counted));
  }

  failed(failure: ProviderFailure): void {
    this.#failure ??= failure;
    for (const listener of this.#listeners) listener(failure);
  }

  /** Calls `listener` on a failure, at once if one is already known; returns how to stop listening. */
  onFailure(listener: (failure: ProviderFailure) => void): () => void {
    this.#listeners.add(listener);
    if (this.#failure !== null) listener(this.#failure);
    return () => this.#listeners.delete(listener);
  }

  /** What was used since the last take (the answers still being read counted first), and the failure told since then; both start again from nothing. */
  async take(): Promise<{ usage: Usage | null; failure: ProviderFailure | null }> {
    await Promise.all(this.#reading);
    const taken = { usage: this.#usage, failure: this.#failure };
    this.#usage = null;
    this.#failure = null;
    return taken;
  }
}
