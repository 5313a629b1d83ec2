import type { Logger } from '../base/logger.js';
import type { Spawner } from '../process/spawn.js';
import type { Store } from '../store/store.js';
import type { KeyedLock } from './keyed-lock.js';
import type { Job } from '../model/job.js';
import type { Launcher, StickyHooks } from './launcher.js';
import { primeCounting } from './output-seen.js';
import type { RunFolder } from '../model/run-folder.js';
import type { StickySession } from './sticky-session.js';
import type { TurnHandle } from './turn.js';
import { stopLeftovers } from './turn-start.js';
import { turnWasStarted } from '../process/keeper.js';
import type { JobEvents } from '../model/events.js';

/**
 * A restart's recovery as the supervisor holds it: each job's under its lock, taken at once (a
 * request naming the job waits until it is done), begun once the daemon answers.
 */
export class Recoveries {
  readonly #lock: KeyedLock;
  readonly #onError: (jobId: string, error: unknown) => void;
  readonly #jobs = new Map<string, Promise<void>>();
  #begin: () => void = () => undefined;
  #done: Promise<void> = Promise.resolve();

  constructor(lock: KeyedLock, onError: (jobId: string, error: unknown) => void) {
    this.#lock = lock;
    this.#onError = onError;
  }

  /** Runs a job's recovery under its lock; what goes wrong in it is the job's error. */
  exclusive(jobId: string, section: () => Promise<void>): Promise<void> {
    const recovered = this.#lock.run(jobId, section).then(
      () => undefined,
      (error: unknown) => this.#onError(jobId, error),
    );
    this.#jobs.set(jobId, recovered);
    void recovered.then(() => this.#jobs.delete(jobId));
    return recovered;
  }

  decided(begin: () => void, done: Promise<void>, logger: Logger): void {
    this.#begin = begin;
    this.#done = done.catch((error: unknown) => logger.error({ err: error }, 'restart recovery failed'));
  }

  /** Settles once the job's recovery is done; null when none is under way. */
  of(jobId: string): Promise<void> | null {
    return this.#jobs.get(jobId) ?? null;
  }

  begin(): void {
    this.#begin();
  }

  /** Begins what has not begun, and resolves once all of it is done (the daemon stops). */
  async finish(): Promise<void> {
    this.#begin();
    await this.#done;
  }
}

/** What recovery asks of the supervisor: each move is made there, by the one writer of job status. */
export interface RecoveryMoves {
  /** A job whose engine may still run keeps its slot while it is taken up (or found gone). */
  hold(jobId: string): void;
  /** What a sticky job's live process reports to the supervisor. */
  hooks(jobId: string): StickyHooks;
  /** An engine process taken up: the job keeps its live session, and its turn (if one runs or ended unheard) is watched. */
  tookUp(job: Job, turn: TurnHandle | null, session: StickySession | null): void;
  /** A running job whose engine could not be taken up fails as interrupted. */
  interrupted(job: Job, why: string): Promise<unknown>;
  /** A running job whose engine process was never started goes back to the queue (scheduled by `queue`). */
  requeue(job: Job): Promise<unknown>;
  /** A running sticky job whose reply was stored but never sent to its live session (taken up): the reply's turn is sent now. */
  sendReply(job: Job, session: StickySession): Promise<void>;
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
  recoveries: Recoveries;
}

/**
 * Restart recovery (docs/restarts.md). What it does before the socket accepts is only to decide:
 * the active jobs are read, each one's lock is taken and the slots of the jobs whose engines may
 * still run are held. From `Recoveries.begin` on (once the daemon answers), the engine processes
 * of running turns and live sessions are taken up where they are, each job on its own; what the
 * daemon before left of everything else is stopped, and each other active job goes where it
 * belongs, so that nothing stays `running` without a process.
 */
export async function recoverJobs(d: RecoveryDeps, moves: RecoveryMoves): Promise<void> {
  let begin!: () => void;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  let startedAt = performance.now();
  const active = await d.store.activeJobs();
  // Read before any turn can start here: what is stopped is only what the daemon before left.
  const leftovers = await d.store.processes();
  const lost = new Map<string, string>();
  const adopted = new Set<string>();
  // Stored as running, but stopped before its engine ran (no keeper recorded since the turn
  // began, or its gate never opened): the turn never began, so it goes back to the queue and runs once.
  const neverStarted = new Set(active.filter((job) => job.status === 'running' && !turnWasStarted(d.folder(job.job_id).engineDir)).map((job) => job.job_id));
  const requeued = new Set<string>();
  const takenUp: Promise<void>[] = [];
  let tookUpAt = startedAt;
  let stoppedAt = startedAt;
  let leftoversStopped: Promise<void> | null = null;
  // Every take-up has ended (taken up or not): then what was not taken up is stopped, once.
  const afterTakeUps = (): Promise<void> =>
    (leftoversStopped ??= Promise.all(takenUp).then(async () => {
      tookUpAt = performance.now();
      await stopLeftovers(d.store, d.spawner, d.logger, leftovers, (jobId) => !adopted.has(jobId), neverStarted);
      stoppedAt = performance.now();
    }));
  const sections = active.map((job) => {
    const sticky = job.interactive_profile?.kind === 'sticky_process';
    const again = neverStarted.has(job.job_id);
    const hasEngine = (job.status === 'running' && !again) || (sticky && job.status === 'waiting_user');
    if (hasEngine) moves.hold(job.job_id);
    let tookUp!: () => void;
    takenUp.push(new Promise<void>((resolve) => (tookUp = resolve)));
    return d.recoveries.exclusive(job.job_id, async () => {
      await begun;
      try {
        const { seen: told, lastStatus } = await primeCounting(d.events, job.job_id, hasEngine);
        // A status stored just before a crash whose event was not written yet is told now: a
        // follower's trail never skips a state the job was in.
        if (lastStatus !== null && lastStatus !== job.status) d.events.emit(job.job_id, 'status_changed', { from: lastStatus, to: job.status });
        if (hasEngine) {
          const problem = await takeUp(d, moves, job, sticky, told).catch((error: unknown) => `taking it up failed: ${(error as Error).message}`);
          if (problem === null) adopted.add(job.job_id);
          else lost.set(job.job_id, problem);
        }
      } finally {
        tookUp();
      }
      if (again) {
        await moves.requeue(job);
        requeued.add(job.job_id);
        return;
      }
      // A turn taken up goes on (and may end at once); the rest waits until leftovers are stopped.
      if (job.status === 'running' && adopted.has(job.job_id)) return;
      if (!adopted.has(job.job_id)) await afterTakeUps();
      if (job.status === 'running') await moves.interrupted(job, lost.get(job.job_id) ?? 'no keeper was recorded');
      // A live session taken up keeps waiting; one that could not be is lost (and may be rescued).
      else if (job.status === 'waiting_user') await moves.waiting(job, lost.get(job.job_id) ?? null);
    });
  });
  // Queued jobs in their order (those queued again among them), once no leftover of the daemon
  // before can be taken for theirs.
  const queued = Promise.all([afterTakeUps(), ...sections.filter((_, i) => neverStarted.has((active[i] as Job).job_id))]).then(() => {
    for (const job of active) if (job.status === 'queued' || requeued.has(job.job_id)) moves.queue(job.job_id);
  });
  const done = Promise.all([...sections.map((section) => section.catch(() => undefined)), queued]).then(() => {
    if (active.length === 0) return;
    const ms = (from: number, to: number): number => Math.round(to - from);
    d.logger.info({ active: active.length, taken_up: adopted.size, not_taken_up: lost.size, take_up_ms: ms(startedAt, tookUpAt), stop_leftovers_ms: ms(tookUpAt, stoppedAt), settle_ms: ms(stoppedAt, performance.now()) }, 'recovered');
  });
  const started = (): void => {
    startedAt = performance.now();
    begin();
  };
  d.recoveries.decided(started, done, d.logger);
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
  // Stored as running on a reply whose turn never reached the live process (its journal's last
  // turn is an earlier attempt): the turn is sent now, once.
  const unsent = job.status === 'running' && !adopted.inFlight && adopted.lastTurnAttempt !== null && adopted.lastTurnAttempt < job.attempt;
  // A turn in flight (running, or waiting for an approval), or one that ended while no daemon heard, is watched as any turn.
  const watched = !unsent && (job.status === 'running' || adopted.inFlight) ? adopted.lastTurn : null;
  moves.tookUp(job, watched, adopted.session);
  if (unsent) await moves.sendReply(job, adopted.session);
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
