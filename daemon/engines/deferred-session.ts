import type { ApprovalDecision, LiveEvent, LiveIo, LiveSession, LiveStart, LiveTurnResult } from './live-session.js';

/** Makes the session of a protocol whose code is loaded when first used. */
export type SessionMaker = (io: LiveIo, start: LiveStart) => LiveSession;

/**
 * A protocol's code loaded once, when a live session first needs it (the ACP SDK and its schema
 * library take a tenth of the daemon's start, and most daemons never open an ACP session): `get`
 * loads it (once: a load that failed stays failed), `connect` makes a session with it.
 */
export class LazyMaker {
  readonly #load: () => Promise<SessionMaker>;
  #loading: Promise<SessionMaker> | null = null;
  #maker: SessionMaker | null = null;

  constructor(load: () => Promise<SessionMaker>) {
    this.#load = load;
  }

  get(): Promise<SessionMaker> {
    this.#loading ??= this.#load().then((maker) => (this.#maker = maker));
    return this.#loading;
  }

  /** The session: at once when the code is loaded, else one that takes its calls while it loads. */
  connect(io: LiveIo, start: LiveStart): LiveSession {
    return this.#maker === null ? new DeferredSession(this.get(), io, start) : this.#maker(io, start);
  }
}

/**
 * A live session whose protocol code is still loading. Lines the engine prints meanwhile are kept
 * and given to the session in order once it exists; `open` waits for it, and everything after
 * `open` reaches it directly. Nothing is sent before the session exists, so no answer can arrive
 * for a request it did not make: that order is what a session taken up after a restart depends
 * on, which is why that path loads the code first (`LiveProtocol.load`).
 */
class DeferredSession implements LiveSession {
  #session: LiveSession | null = null;
  #lines: string[] = [];
  #closed: Error | null = null;
  readonly #ready: Promise<LiveSession>;

  constructor(maker: Promise<SessionMaker>, io: LiveIo, start: LiveStart) {
    this.#ready = maker.then((make) => {
      const session = make(io, start);
      for (const line of this.#lines.splice(0)) session.receive(line);
      this.#session = session;
      if (this.#closed !== null) session.dispose(this.#closed);
      return session;
    });
    // A failed load rejects `open`, which ends the turn as the engine's failure would.
    this.#ready.catch(() => undefined);
  }

  receive(line: string): void {
    if (this.#session === null) this.#lines.push(line);
    else this.#session.receive(line);
  }

  async open(): Promise<string | null> {
    const session = await this.#ready;
    if (this.#closed !== null) throw this.#closed;
    return session.open();
  }

  prompt(text: string, onEvent: (event: LiveEvent) => void): Promise<LiveTurnResult> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    if (this.#session === null) return Promise.reject(new Error('prompt before the session was opened'));
    return this.#session.prompt(text, onEvent);
  }

  interrupt(): void {
    this.#session?.interrupt();
  }

  answer(approvalId: string, decision: ApprovalDecision): void {
    this.#session?.answer(approvalId, decision);
  }

  dispose(error: Error): void {
    this.#closed ??= error;
    this.#session?.dispose(error);
  }
}
