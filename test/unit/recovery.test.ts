import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterRecovery } from '../../daemon/api.js';
import { KeyedLock } from '../../daemon/jobs/keyed-lock.js';
import type { Job } from '../../daemon/model/job.js';
import { Recoveries, recoverJobs, type RecoveryDeps, type RecoveryMoves } from '../../daemon/jobs/recovery.js';
import type { TurnHandle } from '../../daemon/jobs/turn.js';
import type { ProcessRecord } from '../../daemon/store/store.js';
import type { MethodHandler } from '../../rpc/dispatcher.js';
import type { MethodName } from '../../rpc/methods.js';

// docs/restarts.md, "The socket answers first": recovery decides before the socket accepts, and
// takes each job up behind its lock once it is begun.

const job = (job_id: string, status: Job['status']): Job => ({ job_id, status, interactive_profile: null }) as unknown as Job;

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Engine folders: each job's keeper record as `recorded` says (a keeper was started for the job's turn, or not). */
const engineDirs = mkdtempSync(join(tmpdir(), 'skilld-recovery-'));
t.teardown(() => rmSync(engineDirs, { recursive: true, force: true }));
function folderOf(jobId: string, recorded: boolean): { engineDir: string } {
  const engineDir = join(engineDirs, jobId);
  mkdirSync(engineDir, { recursive: true });
  if (recorded) writeFileSync(join(engineDir, 'keeper.json'), '{}');
  else rmSync(join(engineDir, 'keeper.json'), { force: true });
  return { engineDir };
}

/**
 * A restart with one running turn (its take-up held by the test), one queued job and one leftover
 * process record; `unstarted` adds running jobs whose engine process was never started.
 */
function restart(unstarted: string[] = []) {
  const steps: string[] = [];
  const takeUp = deferred<{ problem: string } | TurnHandle>();
  const leftover: ProcessRecord = { job_id: 'job-gone', pid: 999_999, pgid: 999_999, start_time: '1' };
  const lock = new KeyedLock();
  const recoveries = new Recoveries(lock, (jobId, error) => steps.push(`error ${jobId} ${String(error)}`));
  const deps = {
    store: {
      activeJobs: async () => [...unstarted.map((id) => job(id, 'running')), job('job-run', 'running'), job('job-queued', 'queued')],
      processes: async () => [leftover],
      hasJob: async () => false,
      removeProcess: async (pid: number) => void steps.push(`forget ${pid}`),
    },
    events: { prime: async () => true, read: async () => ({ events: [], cursor: '', end: true }) },
    spawner: {
      stopSurvivors: async (_records: unknown, owns: (jobId: string) => boolean) => {
        for (const id of unstarted) if (owns(id)) steps.push(`sweep ${id}`);
        return { records: [], strays: [], cgroups: [] };
      },
    },
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    launcher: { adoptTurn: () => takeUp.promise, adoptSession: () => Promise.reject(new Error('no live session here')) },
    folder: (jobId: string) => folderOf(jobId, !unstarted.includes(jobId)),
    recoveries,
  } as unknown as RecoveryDeps;
  const moves: RecoveryMoves = {
    hold: (jobId) => void steps.push(`hold ${jobId}`),
    hooks: () => ({}) as ReturnType<RecoveryMoves['hooks']>,
    tookUp: (j) => void steps.push(`took up ${j.job_id}`),
    interrupted: async (j, why) => void steps.push(`interrupted ${j.job_id}: ${why}`),
    requeue: async (j) => void steps.push(`requeue ${j.job_id}`),
    sendReply: async (j) => void steps.push(`send reply ${j.job_id}`),
    queue: (jobId) => void steps.push(`queue ${jobId}`),
    waiting: async (j) => void steps.push(`waiting ${j.job_id}`),
  };
  return { steps, takeUp, deps, moves, recoveries, lock };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('recovery decides before the socket accepts: the slot is held, the job locked, nothing taken up or queued yet', async (t) => {
  const { steps, deps, moves, recoveries } = restart();
  await recoverJobs(deps, moves);
  await settle();
  t.same(steps, ['hold job-run'], 'only the slot of the job whose engine may run is held');
  t.not(recoveries.of('job-run'), null, 'the running job is under recovery');
  t.not(recoveries.of('job-queued'), null, 'so is the queued one');
  t.equal(recoveries.of('job-new'), null, 'a job created meanwhile is not');
});

t.test('a take-up under way: requests naming its job wait for it, the others do not; queued jobs start after it and after the leftovers are stopped', async (t) => {
  const { steps, takeUp, deps, moves, recoveries } = restart();
  await recoverJobs(deps, moves);
  recoveries.begin();
  const methods = afterRecovery(
    {
      'jobs/get': (params: unknown) => `got ${(params as { job_id: string }).job_id}`,
      'jobs/remove': (params: unknown) => `removed ${(params as { job_ids: string[] }).job_ids.join(' ')}`,
      'daemon/ping': () => 'pong',
    } as unknown as Record<MethodName, MethodHandler<null>>,
    (jobId) => recoveries.of(jobId),
  );
  t.equal(methods['daemon/ping'](undefined, null), 'pong', 'a request naming no job is answered at once');
  t.equal(methods['jobs/get']({ job_id: 'job-new' }, null), 'got job-new', 'nor does one naming a job not under recovery wait');
  let answered = false;
  const get = Promise.resolve(methods['jobs/get']({ job_id: 'job-run' }, null)).then((value) => {
    answered = true;
    return value;
  });
  let removed = false;
  const remove = Promise.resolve(methods['jobs/remove']({ job_ids: ['job-new', 'job-run'] }, null)).then((value) => {
    removed = true;
    return value;
  });
  await settle();
  t.notOk(answered, 'jobs/get of the job being taken up waits');
  t.notOk(removed, 'so does jobs/remove naming it among others');
  t.notOk(steps.includes('queue job-queued'), 'the queued job does not start while a take-up is under way');

  takeUp.resolve({ problem: 'its keeper ended without the exit status of its engine' });
  t.equal(await get, 'got job-run', 'and is answered once the job is settled');
  t.equal(await remove, 'removed job-new job-run');
  t.same(steps.slice(0, 2), ['hold job-run', 'forget 999999'], 'the leftovers are stopped first');
  t.same(steps.slice(2).sort(), ['interrupted job-run: its keeper ended without the exit status of its engine', 'queue job-queued'], 'then the job not taken up is settled, and the queued job queued');
  await recoveries.finish();
  t.equal(recoveries.of('job-run'), null, 'nothing is under recovery once it is done');
});

t.test('a stop of the daemon before the take-up was begun begins it, and waits for it', async (t) => {
  const { steps, takeUp, deps, moves, recoveries } = restart();
  await recoverJobs(deps, moves);
  let finished = false;
  const finishing = recoveries.finish().then(() => (finished = true));
  await settle();
  t.notOk(finished, 'the stop waits for the take-up under way');
  takeUp.resolve({ problem: 'gone' });
  await finishing;
  t.ok(steps.includes('interrupted job-run: gone'), 'which ended as it would have');
});

t.test('a take-up that throws fails its job as not taken up, with the reason', async (t) => {
  const { steps, takeUp, deps, moves, recoveries } = restart();
  await recoverJobs(deps, moves);
  recoveries.begin();
  (takeUp as unknown as { resolve: (v: unknown) => void }).resolve(Promise.reject(new Error('the record is unreadable')));
  await recoveries.finish();
  t.ok(steps.includes('interrupted job-run: taking it up failed: the record is unreadable'), steps.join('\n'));
});

t.test('a job stored as running whose engine was never started goes back to the queue, ahead of those queued after it, once what is marked with it is stopped', async (t) => {
  const { steps, takeUp, deps, moves, recoveries } = restart(['job-unstarted']);
  await recoverJobs(deps, moves);
  t.same(steps, ['hold job-run'], 'no slot is held for it: no engine of it runs');
  recoveries.begin();
  await settle();
  t.notOk(steps.some((s) => s.startsWith('queue')), 'nothing is queued while a take-up is under way');
  takeUp.resolve({ problem: 'gone' });
  await recoveries.finish();
  t.ok(steps.includes('requeue job-unstarted'), 'it is queued again, not failed');
  t.notOk(steps.some((s) => s.startsWith('interrupted job-unstarted')), steps.join('\n'));
  t.ok(steps.indexOf('sweep job-unstarted') < steps.indexOf('queue job-unstarted'), 'a process marked with it is looked for and stopped before it runs again');
  t.same(steps.filter((s) => s.startsWith('queue')), ['queue job-unstarted', 'queue job-queued'], 'in the order of the active jobs');
});

t.test('a sticky job stored as running on a reply its live process never got: taken up, and the reply\'s turn sent once', async (t) => {
  const steps: string[] = [];
  const sticky = { ...job('job-live', 'running'), interactive_profile: { kind: 'sticky_process' }, attempt: 2 } as unknown as Job;
  const recoveries = new Recoveries(new KeyedLock(), (jobId, error) => steps.push(`error ${jobId} ${String(error)}`));
  const adopted = (lastTurnAttempt: number | null, inFlight: boolean) => ({ session: {}, lastTurn: { pid: 1 }, inFlight, lastTurnAttempt });
  for (const [lastTurnAttempt, inFlight, expected] of [
    [1, false, ['took up job-live, turn none', 'send reply job-live']],
    [2, false, ['took up job-live, turn watched']],
    [2, true, ['took up job-live, turn watched']],
    [null, false, ['took up job-live, turn watched']],
  ] as const) {
    steps.length = 0;
    const deps = {
      store: { activeJobs: async () => [sticky], processes: async () => [], hasJob: async () => true, removeProcess: async () => undefined },
      events: { prime: async () => true, read: async () => ({ events: [], cursor: '', end: true }) },
      spawner: { stopSurvivors: async () => ({ records: [], strays: [], cgroups: [] }) },
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      launcher: { adoptTurn: () => Promise.reject(new Error('not one-shot')), adoptSession: async () => adopted(lastTurnAttempt, inFlight) },
      folder: (jobId: string) => folderOf(jobId, true),
      recoveries,
    } as unknown as RecoveryDeps;
    await recoverJobs(deps, {
      hold: () => undefined,
      hooks: () => ({}) as ReturnType<RecoveryMoves['hooks']>,
      tookUp: (j, turn) => void steps.push(`took up ${j.job_id}, turn ${turn === null ? 'none' : 'watched'}`),
      interrupted: async (j) => void steps.push(`interrupted ${j.job_id}`),
      requeue: async (j) => void steps.push(`requeue ${j.job_id}`),
      sendReply: async (j) => void steps.push(`send reply ${j.job_id}`),
      queue: (jobId) => void steps.push(`queue ${jobId}`),
      waiting: async (j) => void steps.push(`waiting ${j.job_id}`),
    });
    await recoveries.finish();
    t.same(steps, expected, `last turn begun: attempt ${String(lastTurnAttempt)}, ${inFlight ? 'in flight' : 'ended'}`);
  }
});
