import type { Clock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import { isStorageFault } from '../store/storage-fault.js';
import type { KeyedLock } from './keyed-lock.js';

/** A task that failed because the storage did (a full disk) is tried again after this, doubling up to the max. */
export const STORAGE_RETRY_MIN_MS = 500;
export const STORAGE_RETRY_MAX_MS = 30_000;

/**
 * Runs the work the daemon does by itself for a job (a turn's start or end, a deadline, a lost
 * process) under the job's lock. When the storage fails the task is tried again, later and later,
 * until it succeeds: the job waits where it is and nothing is decided twice. Any other error goes
 * to `onError`. Nothing is retried once the daemon is stopping: the next start settles the job.
 */
export class JobTasks {
  readonly #lock: KeyedLock;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #stopping: () => boolean;

  constructor(lock: KeyedLock, clock: Clock, logger: Logger, stopping: () => boolean) {
    this.#lock = lock;
    this.#clock = clock;
    this.#logger = logger;
    this.#stopping = stopping;
  }

  run(jobId: string, task: () => Promise<void>, onError: (error: unknown) => void, retry = 0): void {
    void this.#lock.run(jobId, task).catch((error: unknown) => {
      if (!isStorageFault(error)) {
        onError(error);
        return;
      }
      if (this.#stopping()) return;
      const delayMs = Math.min(STORAGE_RETRY_MIN_MS * 2 ** retry, STORAGE_RETRY_MAX_MS);
      this.#logger.warn({ job_id: jobId, err: error, retry_in_ms: delayMs }, 'storage unavailable; the job waits and this is tried again');
      this.#clock.setTimer(delayMs, () => this.run(jobId, task, onError, retry + 1));
    });
  }
}
