import { statSync, watch } from 'node:fs';
import { dirname, join, relative, isAbsolute } from 'node:path';
import type { Clock, Timer } from '../base/clock.js';
import type { Containment } from './containment.js';
import { KEEPER_FILES, currentBootId, readExitCode, readRecord, type KeeperRecord } from './keeper.js';
import { KeptProcess, type EngineProcess, type ExitInfo, type KeeperEnd, type OutputSink, type OutputStream } from './kept-process.js';
import { isSameProcess, markOf } from './proc.js';

/** How often a keeper a later daemon took up is looked at, besides when its status file changes. */
export const KEEPER_CHECK_MS = 1000;
/** Once its status is written, how often to look whether the keeper has exited. */
const KEEPER_EXIT_CHECK_MS = 20;

export interface AdoptRequest extends OutputSink {
  /** The keeper's folder. */
  dir: string;
  /** Lines of each stream the daemon before took already (events it stored). */
  skip: Record<OutputStream, number>;
}

/**
 * A process taken up again: running still (`endedAt` null), or ended while no daemon was there
 * (then `exited` resolves with what its keeper wrote). Or why it cannot be: nothing recorded, an unknown keeper
 * protocol, a machine restarted, a keeper gone without the engine's status, a pid taken by
 * another process.
 */
export type Adopted = { process: EngineProcess; record: KeeperRecord; endedAt: Date | null } | { problem: string; record: KeeperRecord | null };

/**
 * Takes up the engine process whose keeper is recorded in `request.dir`. A process is the
 * keeper only if its pid, its start time, the machine's boot and its job mark all match: a
 * recycled pid is never taken for it.
 */
export function takeUp(request: AdoptRequest, clock: Clock, containment: Pick<Containment, 'adopt'>): Promise<Adopted> {
  const record = readRecord(request.dir);
  if ('problem' in record) return Promise.resolve({ problem: record.problem, record: null });
  // Only files of the job's own run folder are read as its output.
  const runFolder = dirname(request.dir);
  if (![record.stdout, record.stderr].every((file) => isWithin(runFolder, file))) return Promise.resolve({ problem: 'its keeper record names output files outside its run folder', record: null });
  const running = record.boot_id === currentBootId() && isSameProcess(record.pid, record.start_time) && markOf(record.pid) === record.job_id;
  if (!running && readExitCode(request.dir) === null) {
    const problem = record.boot_id !== currentBootId() ? 'the machine restarted since it started' : 'its keeper ended without the exit status of its engine';
    return Promise.resolve({ problem, record });
  }
  const end = running ? watchKeeper(record, request.dir, clock) : { ended: Promise.resolve(noStatus), cancel: () => undefined };
  const process = new KeptProcess({
    pid: running ? record.pid : null,
    dir: request.dir,
    hold: containment.adopt(record.place, record.job_id, true),
    sink: request,
    files: { stdout: record.stdout, stderr: record.stderr },
    skip: request.skip,
    input: running && record.live_input ? join(request.dir, KEEPER_FILES.stdin) : null,
    end,
  });
  return Promise.resolve({ process, record, endedAt: running ? null : statusTime(request.dir) });
}

/** The keeper's exit as a later daemon sees it: not its parent, it learns nothing but the status file. */
const noStatus: ExitInfo = { code: null, signal: 'SIGKILL', spawnError: null };

/** Resolves once the keeper has exited: looked at when its status file changes, and every KEEPER_CHECK_MS. */
function watchKeeper(record: KeeperRecord, dir: string, clock: Clock): KeeperEnd {
  let timer: Timer | null = null;
  let done = false;
  let resolve: (exit: ExitInfo) => void = () => undefined;
  const ended = new Promise<ExitInfo>((r) => (resolve = r));
  const watcher = watch(join(dir, KEEPER_FILES.status), { persistent: false }, () => check());
  watcher.on('error', () => undefined);
  const cancel = (): void => {
    done = true;
    timer?.cancel();
    watcher.close();
  };
  const check = (): void => {
    if (done) return;
    timer?.cancel();
    if (!isSameProcess(record.pid, record.start_time)) {
      cancel();
      resolve(noStatus);
      return;
    }
    timer = clock.setTimer(readExitCode(dir) === null ? KEEPER_CHECK_MS : KEEPER_EXIT_CHECK_MS, check);
  };
  check();
  return { ended, cancel };
}

/** When the keeper wrote the engine's exit status: when the engine ended. */
function statusTime(dir: string): Date {
  return statSync(join(dir, KEEPER_FILES.status)).mtime;
}

function isWithin(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
