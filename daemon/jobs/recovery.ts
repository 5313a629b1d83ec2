import type { Logger } from '../logger.js';
import type { Spawner } from '../process/spawn.js';
import type { Store } from '../store/store.js';
import type { JobEvents } from './events.js';
import type { Job } from './job.js';
import type { Launcher, StickyHooks } from './launcher.js';
import { primeCounting } from './output-seen.js';
import type { RunFolder } from './run-folder.js';
import type { StickySession } from './sticky-session.js';
import type { TurnHandle } from './turn.js';
import { stopLeftovers } from './turn-start.js';

/** What recovery asks of the supervisor: each move is made there, by the one writer of job status. */
export interface RecoveryMoves {
  /** What a sticky job's live process reports to the supervisor. */
  hooks(jobId: string): StickyHooks;
  /** An engine process taken up: the job holds its slot, keeps its live session, and its turn (if one runs or ended unheard) is watched. */
  tookUp(job: Job, turn: TurnHandle | null, session: StickySession | null): void;
  /** A running job whose engine could not be taken up fails as interrupted. */
  interrupted(job: Job, why: string): Promise<void>;
  queue(jobId: string): void;
  /** A waiting job after a restart; `lost` says why its live session could not be taken up. */
  waiting(job: Job, lost: string | null): Promise<void>;
}

export interface RecoveryDeps {
  store: Store;
  events: JobEvents;
  spawner: Spawner;
  logger: Logger;
  launcher: Pick<Launcher, 'adoptTurn' | 'adoptSession'>;
  folder(jobId: string): RunFolder;
}

/**
 * Restart recovery (docs/restarts.md), run before the socket accepts: the engine processes of
 * running turns and live sessions are taken up where they are; what the daemon before left of everything else is
 * stopped, and each other active job goes where it belongs, so that nothing stays `running`
 * without a process.
 */
export async function recoverJobs(d: RecoveryDeps, moves: RecoveryMoves): Promise<void> {
  const startedAt = performance.now();
  const active = await d.store.activeJobs();
  const lost = new Map<string, string>();
  const adopted = new Set<string>();
  // Jobs apart are taken up side by side: what each waits for is its own files.
  await Promise.all(
    active.map(async (job) => {
      const sticky = job.interactive_profile?.kind === 'sticky_process';
      const hasEngine = job.status === 'running' || (sticky && job.status === 'waiting_user');
      const told = await primeCounting(d.events, job.job_id, hasEngine);
      if (!hasEngine) return;
      const problem = await takeUp(d, moves, job, sticky, told);
      if (problem === null) adopted.add(job.job_id);
      else lost.set(job.job_id, problem);
    }),
  );
  const tookUpAt = performance.now();
  // A turn taken up may end at once: from here on, its job is its own turn's to settle.
  await stopLeftovers(d.store, d.spawner, d.logger, (jobId) => !adopted.has(jobId));
  const stoppedAt = performance.now();
  // Queued jobs in their order; the others each on their own.
  const settling: Promise<void>[] = [];
  for (const job of active) {
    if (job.status === 'running' && !adopted.has(job.job_id)) settling.push(moves.interrupted(job, lost.get(job.job_id) ?? 'no keeper was recorded'));
    else if (job.status === 'queued') moves.queue(job.job_id);
    // A live session taken up keeps waiting; one that could not be is lost (and may be rescued).
    else if (job.status === 'waiting_user') settling.push(moves.waiting(job, lost.get(job.job_id) ?? null));
  }
  await Promise.all(settling);
  if (active.length === 0) return;
  const ms = (from: number, to: number): number => Math.round(to - from);
  d.logger.info({ active: active.length, taken_up: adopted.size, not_taken_up: lost.size, take_up_ms: ms(startedAt, tookUpAt), stop_leftovers_ms: ms(tookUpAt, stoppedAt), settle_ms: ms(stoppedAt, performance.now()) }, 'recovered');
}

/** Takes up a job's engine process, a one-shot turn or a live session; null once it goes on here, else why it cannot. */
async function takeUp(d: RecoveryDeps, moves: RecoveryMoves, job: Job, sticky: boolean, told: Record<'stdout' | 'stderr', number>): Promise<string | null> {
  if (!sticky) {
    const turn = await d.launcher.adoptTurn(job, d.folder(job.job_id), told);
    if ('problem' in turn) return turn.problem;
    moves.tookUp(job, turn, null);
    return null;
  }
  const adopted = await d.launcher.adoptSession(job, d.folder(job.job_id), told, moves.hooks(job.job_id));
  if ('problem' in adopted) return adopted.problem;
  // A turn in flight (running, or waiting for an approval), or one that ended while no daemon heard, is watched as any turn.
  const watched = job.status === 'running' || adopted.inFlight ? adopted.lastTurn : null;
  moves.tookUp(job, watched, adopted.session);
  return null;
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
