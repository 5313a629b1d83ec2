import type { JobDocs } from '../store/job-docs.js';
import type { Pending } from '../model/gate.js';
import { askedRound, withAsked, type Interaction } from '../model/interactions.js';

/**
 * The interaction histories of active jobs (stored with the job's documents), with the latest
 * version of each kept in memory once read or written: a reply, a deadline or a turn reads it
 * without going to the store. The supervisor is the only writer; its moves
 * (moves.ts) `forget` a job once it is finished.
 */
export class Histories {
  readonly #docs: JobDocs;
  readonly #latest = new Map<string, readonly Interaction[]>();

  constructor(docs: JobDocs) {
    this.#docs = docs;
  }

  /** The latest version; `remember` false for a finished job, which nothing will `forget`. */
  async read(jobId: string, remember = true): Promise<readonly Interaction[]> {
    const cached = this.#latest.get(jobId);
    if (cached !== undefined) return cached;
    const history = await this.#docs.history(jobId);
    if (!remember) return history;
    // A write that finished while the file was read holds the newer version: keep that one.
    const latest = this.#latest.get(jobId) ?? history;
    this.#latest.set(jobId, latest);
    return latest;
  }

  /** Appends the new version durably; it is what `read` returns from then on. */
  async write(jobId: string, history: readonly Interaction[]): Promise<void> {
    // A version already read or written means one is stored: no need to look.
    const exists = (this.#latest.get(jobId)?.length ?? 0) > 0;
    await this.#docs.putHistory(jobId, history, exists);
    this.#latest.set(jobId, history);
  }

  /**
   * A new round, asked at `at`, appended: it gets the next id (approvals come within a turn, so
   * a question's id is at least its attempt, a later round's more). Returns it with that id. The
   * same question asked again while its round is unanswered is that round (`askedRound`).
   */
  async ask(jobId: string, asked: Pending, at: string): Promise<Pending> {
    const history = await this.read(jobId);
    const id = askedRound(history, asked);
    if (id === null) return { ...asked, interaction_id: (history.at(-1) as Interaction).interaction_id };
    const pending = { ...asked, interaction_id: id };
    await this.write(jobId, withAsked(history, pending, at));
    return pending;
  }

  forget(jobId: string): void {
    this.#latest.delete(jobId);
  }

  get size(): number {
    return this.#latest.size;
  }
}
