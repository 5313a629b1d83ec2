import type { StickySession } from './sticky-session.js';

/** The live engine processes of sticky jobs on this host, by job id. */
export class LiveSessions {
  readonly #sessions = new Map<string, StickySession>();

  get(jobId: string): StickySession | undefined {
    return this.#sessions.get(jobId);
  }

  has(jobId: string): boolean {
    return this.#sessions.has(jobId);
  }

  set(jobId: string, session: StickySession): void {
    this.#sessions.set(jobId, session);
  }

  /** Forgets the job's session without stopping it: its process is gone already. */
  forget(jobId: string): void {
    this.#sessions.delete(jobId);
  }

  all(): StickySession[] {
    return [...this.#sessions.values()];
  }

  /** Stops the job's live process, if it has one, and forgets it; resolves once it is gone (null: none). */
  end(jobId: string): Promise<void> | null {
    const session = this.#sessions.get(jobId);
    if (session === undefined) return null;
    this.#sessions.delete(jobId);
    return session.stop();
  }
}
