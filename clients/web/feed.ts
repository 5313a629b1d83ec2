/** Sends one server-sent event: its name, its data (as JSON) and, for a job's own stream, its id (the event's seq). */
export type SendEvent = (name: string, data: unknown, id?: number) => void;

/** What a feed runs while it has listeners: it sends to them all, and ends when the signal aborts. */
export type FeedSource = (send: SendEvent, signal: AbortSignal) => Promise<void>;

/**
 * One stream of events shared by every listener that wants the same one (every open list of jobs
 * follows every job's status the same way): started by the first listener, stopped after the last
 * has left, so many open pages hold one daemon connection between them. A listener that joins
 * late first hears whether the daemon answers, as the others last heard it (for the bridge's
 * stream, `connected: true` once its subscription stands).
 */
export class Feed {
  readonly #source: FeedSource;
  readonly #listeners = new Set<SendEvent>();
  #running: { stop: AbortController; done: Promise<void> } | null = null;
  #daemon: unknown = null;

  constructor(source: FeedSource) {
    this.#source = source;
  }

  /** Sends the feed's events to `send` until `signal` aborts; rejects with the feed's bug, if it meets one. */
  async follow(send: SendEvent, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#listeners.add(send);
    if (this.#daemon !== null) send('daemon', this.#daemon);
    const running = this.#start();
    const left = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([left, running.done]);
    } finally {
      this.#listeners.delete(send);
      if (this.#listeners.size === 0 && this.#running === running) {
        this.#running = null;
        this.#daemon = null;
        running.stop.abort();
      }
    }
  }

  #start(): { stop: AbortController; done: Promise<void> } {
    if (this.#running !== null) return this.#running;
    const stop = new AbortController();
    const broadcast: SendEvent = (name, data, id) => {
      if (name === 'daemon') this.#daemon = data;
      for (const send of [...this.#listeners]) send(name, data, id);
    };
    const running = { stop, done: this.#source(broadcast, stop.signal) };
    // The feed ended by itself (a refusal said to every listener, or a bug): the next listener starts another.
    const over = (): void => {
      if (this.#running !== running) return;
      this.#running = null;
      this.#daemon = null;
    };
    running.done.then(over, over);
    this.#running = running;
    return running;
  }
}
