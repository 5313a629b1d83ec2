/** How long a connection may take over one request line, and stay with nothing to do. */
export interface ConnectionDeadlines {
  /** From the first byte of a request line to its end, while the daemon reads the connection. */
  lineTimeoutMs: number;
  /** With nothing in flight, no unfinished line and nothing held (a subscription); 0: no limit. */
  idleTimeoutMs: number;
}

/** What a connection's deadlines ask of the server at a moment. */
export type Overdue = 'line' | 'idle' | null;

/**
 * What one connection is doing, for its deadlines and for making room: requests in flight, what
 * holds it open (a subscription), whether a line is unfinished and since when, and since when it
 * has had nothing to do. Times are milliseconds from the server's clock.
 */
export class Activity {
  readonly #now: () => number;
  #inFlight = 0;
  #holds = 0;
  #reading = true;
  #lineSince: number | null = null;
  #idleSince: number | null;

  constructor(now: () => number) {
    this.#now = now;
    this.#idleSince = now();
  }

  /** Whether bytes of a line not yet ended are held. */
  lineOpen(open: boolean): void {
    if (open && this.#lineSince === null) this.#lineSince = this.#now();
    if (!open) this.#lineSince = null;
    this.#settle();
  }

  requestStarted(): void {
    this.#inFlight += 1;
    this.#settle();
  }

  requestEnded(): void {
    this.#inFlight -= 1;
    this.#settle();
  }

  /** Keeps the connection from counting as idle until the returned function is called (once). */
  hold(): () => void {
    this.#holds += 1;
    this.#settle();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds -= 1;
      this.#settle();
    };
  }

  /**
   * The daemon stopped reading the connection (too many requests in flight) or reads it again:
   * a line cannot end while it is not read, so its time starts again when reading does.
   */
  reading(on: boolean): void {
    this.#reading = on;
    if (on && this.#lineSince !== null) this.#lineSince = this.#now();
  }

  /** Which deadline has passed at `now`, if any. */
  overdue(now: number, deadlines: ConnectionDeadlines): Overdue {
    if (this.#reading && this.#lineSince !== null && now - this.#lineSince >= deadlines.lineTimeoutMs) return 'line';
    if (deadlines.idleTimeoutMs > 0 && this.#idleSince !== null && now - this.#idleSince >= deadlines.idleTimeoutMs) return 'idle';
    return null;
  }

  /**
   * Since when the connection has had nothing in progress, an unfinished line aside: it may be
   * closed to make room for a new client, oldest first. Null while it is busy.
   */
  get spareSince(): number | null {
    if (this.#inFlight > 0 || this.#holds > 0) return null;
    return this.#lineSince ?? this.#idleSince;
  }

  #settle(): void {
    const idle = this.#inFlight === 0 && this.#holds === 0 && this.#lineSince === null;
    if (!idle) this.#idleSince = null;
    else this.#idleSince ??= this.#now();
  }
}
