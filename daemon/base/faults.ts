import type { Logger } from './logger.js';

/**
 * Errors that escaped the code meant to handle them: a bug in a method, or an exception or
 * rejection nothing caught. Each is logged with its stack and counted for `daemon/status`; none
 * ends the process, because one bad request must never take every job and client down with it.
 */
export class Faults {
  readonly #logger: Logger;
  readonly #now: () => Date;
  #count = 0;
  #lastAt: string | null = null;

  constructor(logger: Logger, now: () => Date) {
    this.#logger = logger;
    this.#now = now;
  }

  report(where: string, error: unknown, context: Record<string, unknown> = {}): void {
    this.#count += 1;
    this.#lastAt = this.#now().toISOString();
    this.#logger.error({ ...context, where, err: error }, 'internal error');
  }

  /** What `daemon/status` shows: how many, and when the last one happened. */
  stats(): { count: number; last_at: string | null } {
    return { count: this.#count, last_at: this.#lastAt };
  }

  /**
   * The last line of defence: an uncaught exception or an unhandled rejection anywhere in the
   * process is reported, and the daemon keeps serving. Returns the function that removes it.
   */
  guardProcess(): () => void {
    const onException = (error: unknown): void => this.report('uncaught_exception', error);
    const onRejection = (reason: unknown): void => this.report('unhandled_rejection', reason);
    process.on('uncaughtException', onException);
    process.on('unhandledRejection', onRejection);
    return () => {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
    };
  }
}
