import type { Logger } from '../logger.js';
import type { Spawner } from '../process/spawn.js';
import type { Store } from '../store/store.js';
import type { JobEvents } from './events.js';
import type { Job } from './job.js';
import type { StickySession } from './sticky-session.js';
import type { TurnHandle } from './turn.js';
import { stopLeftovers } from './turn-start.js';

/** What recovery asks of the supervisor: each move is made there, by the one writer of job status. */
export interface RecoveryMoves {
  /** Takes up the turn of a running one-shot job whose engine an earlier daemon started; null once it goes on here, else why it cannot. */
  adoptTurn(job: Job): Promise<string | null>;
  /** A running job whose engine could not be taken up fails as interrupted. */
  interrupted(job: Job, why: string): Promise<void>;
  queue(jobId: string): void;
  /** A waiting job after a restart. */
  waiting(job: Job): Promise<void>;
}

export interface RecoveryDeps {
  store: Store;
  events: JobEvents;
  spawner: Spawner;
  logger: Logger;
}

/**
 * Restart recovery (docs/restarts.md), run before the socket accepts: the engine processes of
 * running turns are taken up where they are; what the daemon before left of everything else is
 * stopped, and each other active job goes where it belongs, so that nothing stays `running`
 * without a process.
 */
export async function recoverJobs(d: RecoveryDeps, moves: RecoveryMoves): Promise<void> {
  const active = await d.store.activeJobs();
  const lost = new Map<string, string>();
  const adopted = new Set<string>();
  // Jobs apart are taken up side by side: what each waits for is its own files.
  await Promise.all(
    active.map(async (job) => {
      await d.events.prime(job.job_id);
      if (job.status !== 'running' || job.interactive_profile?.kind === 'sticky_process') return;
      const problem = await moves.adoptTurn(job);
      if (problem === null) adopted.add(job.job_id);
      else lost.set(job.job_id, problem);
    }),
  );
  // A turn taken up may end at once: from here on, its job is its own turn's to settle.
  await stopLeftovers(d.store, d.spawner, d.logger, (jobId) => !adopted.has(jobId));
  for (const job of active) {
    if (adopted.has(job.job_id)) continue;
    if (job.status === 'running') await moves.interrupted(job, lost.get(job.job_id) ?? 'it was a live session');
    else if (job.status === 'queued') moves.queue(job.job_id);
    else if (job.status === 'waiting_user') await moves.waiting(job);
  }
}

/**
 * What a stop of the daemon does with its engines: with `stopEngines`, every running turn and
 * live process is stopped, and their jobs are settled at the next start; else they are left to
 * their keepers, their jobs as they are, to be taken up at the next start.
 */
export async function leaveOrStop(turns: readonly TurnHandle[], sessions: readonly StickySession[], stopEngines: boolean): Promise<void> {
  if (!stopEngines) {
    await Promise.all([...turns.map((turn) => turn.detach()), ...sessions.map((session) => session.detach())]);
    return;
  }
  for (const turn of turns) turn.stop('canceled');
  await Promise.all([...turns.map((turn) => turn.done.catch(() => undefined)), ...sessions.map((session) => session.stop())]);
}
