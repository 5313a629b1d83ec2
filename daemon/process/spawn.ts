import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { Clock } from '../clock.js';
import type { ProcessRecord } from '../store/store.js';
import { bwrapArgv } from '../sandbox/bwrap.js';
import type { SandboxPlan } from '../sandbox/plan.js';
import { StartError, type Containment } from './containment.js';
import { execError } from './executable.js';
import { KEEPER_FILES, KEEPER_VERSION, currentBootId, keeperArgv, writeRecord, type KeeperRecord } from './keeper.js';
import { KeptProcess, makeFifo, type EngineProcess, type ExitInfo, type OutputSink } from './kept-process.js';
import { takeUp, type Adopted, type AdoptRequest } from './take-up.js';
import { JOB_MARK, readStat } from './proc.js';
import type { Survivors } from './survivors.js';

export type { EngineProcess, ExitInfo, OutputSink, OutputStream } from './kept-process.js';
export type { Adopted, AdoptRequest } from './take-up.js';
export { MAX_ENGINE_LINE_BYTES, exitOf } from './kept-process.js';

export interface SpawnRequest extends OutputSink {
  /** Full argv: executable first. */
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** The job the process works for: set as `JOB_MARK` in its environment, used to find its tools and to name its cgroup. */
  mark: string;
  /** The sandbox it runs in (docs/sandbox.md); null: none. */
  sandbox: SandboxPlan | null;
  /**
   * `ignore`: nothing (/dev/null); `{ text }`: a file the engine reads to its end; `live`: a FIFO
   * that takes `write` for the process's whole life, whichever daemon writes.
   */
  stdin: 'ignore' | 'live' | { text: string };
  /**
   * The keeper's folder (its record, exit status and stdin), the files the engine appends its
   * output to, and what the owner needs to take the process up again after a restart.
   */
  keeper: { dir: string; stdout: string; stderr: string; note: unknown };
}

/** Starts engine processes, takes up those an earlier daemon left, and stops what is left of the rest. */
export interface Spawner {
  spawn(request: SpawnRequest): EngineProcess;
  /** The process whose keeper is recorded in `request.dir`, if it is still the same one (or ended while no daemon was there). */
  adopt(request: AdoptRequest): Promise<Adopted>;
  /** Stops what outlived a crashed daemon, of the jobs that `ownsJob` accepts (restart recovery). */
  stopSurvivors(records: readonly ProcessRecord[], ownsJob: (jobId: string) => boolean): Promise<Survivors>;
}

/** The real spawner: the only user of execa. Each engine process is started by a keeper and held by `containment`. */
export function createSpawner(clock: Clock, containment: Containment): Spawner {
  return {
    spawn(request) {
      let hold;
      try {
        hold = containment.hold(kept(request));
      } catch (error) {
        if (error instanceof StartError) return notStarted(error.message);
        throw error;
      }
      const { dir } = request.keeper;
      const stdio = openStdio(request);
      const child = startKeeper(hold.argv, request, stdio.fds);
      for (const fd of stdio.fds) if (fd !== 'ignore') closeSync(fd);
      const pid = child.pid ?? null;
      const stat = pid === null ? null : readStat(pid);
      if (pid !== null && stat !== null) writeRecord(dir, recordOf(request, pid, stat.startTime, hold.place, clock));
      const ended = new Promise<ExitInfo>((resolve) => {
        child.once('exit', (code, signal) => resolve({ code, signal, spawnError: null }));
        void child.then((result) => {
          // The code alone: execa's message repeats the whole command line, prompt included.
          if (pid === null || result.exitCode === undefined) resolve({ code: null, signal: null, spawnError: result.code ?? 'spawn failed' });
        });
      });
      // Once detached, the keeper no longer keeps the daemon from exiting.
      const end = { ended, cancel: () => child.unref() };
      return new KeptProcess({ pid, dir, hold, sink: request, files: request.keeper, skip: { stdout: 0, stderr: 0 }, input: stdio.live ? join(dir, KEEPER_FILES.stdin) : null, end });
    },
    adopt: (request) => takeUp(request, clock, containment),
    stopSurvivors: (records, ownsJob) => containment.stopSurvivors(records, ownsJob),
  };
}

/**
 * The launch of a request: its keeper running its argv, in its sandbox when it has one (the
 * sandbox's outer process is then the keeper). The keeper is the leader, which a stop spares its
 * SIGTERM: it ends by itself once the engine has. A missing engine is said as it is.
 */
function kept(request: SpawnRequest): { argv: readonly string[]; cwd: string; env: Readonly<Record<string, string>>; mark: string; spareLeader: boolean } {
  const { argv, cwd, env, mark, sandbox } = request;
  const cannotExec = execError(argv[0] ?? '', env['PATH'], cwd);
  if (cannotExec !== null) throw new StartError(cannotExec);
  const sandboxArgs = sandbox === null ? null : bwrapArgv(sandbox, []);
  return { argv: keeperArgv(argv, sandboxArgs), cwd, env, mark, spareLeader: true };
}

type Stdio = ['ignore' | number, number, number, number];

/** The keeper's files, made fresh, and the descriptors its process starts with (closed here once it has). */
function openStdio(request: SpawnRequest): { fds: Stdio; live: boolean } {
  const { dir, stdout, stderr } = request.keeper;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of Object.values(KEEPER_FILES)) rmSync(join(dir, name), { force: true });
  let stdin: 'ignore' | number = 'ignore';
  if (request.stdin === 'live') {
    // Read and write: the engine holds a writer itself, so no daemon's going away is an end of input.
    stdin = openSync(makeFifo(join(dir, KEEPER_FILES.stdin)), 'r+');
  } else if (request.stdin !== 'ignore') {
    writeFileSync(join(dir, KEEPER_FILES.stdin), request.stdin.text, { mode: 0o600 });
    stdin = openSync(join(dir, KEEPER_FILES.stdin), 'r');
  }
  const fds: Stdio = [stdin, openSync(stdout, 'a', 0o600), openSync(stderr, 'a', 0o600), openSync(join(dir, KEEPER_FILES.status), 'w', 0o600)];
  return { fds, live: request.stdin === 'live' };
}

/** Starts the keeper as the leader of its own process group and session: nothing of the daemon's ending reaches it. */
function startKeeper(argv: readonly string[], request: SpawnRequest, stdio: Stdio) {
  const [file, ...args] = argv as [string, ...string[]];
  return execa(file, args, {
    cwd: request.cwd,
    env: { ...request.env, [JOB_MARK]: request.mark },
    extendEnv: false,
    // Descriptors are handed to the process as they are (execa's types name only a few numbers).
    stdio: stdio as unknown as ['ignore', 'ignore', 'ignore', 'ignore'],
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
  });
}

function recordOf(request: SpawnRequest, pid: number, startTime: string, place: KeeperRecord['place'], clock: Clock): KeeperRecord {
  const { stdout, stderr, note } = request.keeper;
  return { keeper: KEEPER_VERSION, job_id: request.mark, pid, start_time: startTime, boot_id: currentBootId(), started_at: clock.now().toISOString(), place, stdout, stderr, live_input: request.stdin === 'live', note };
}

/** A process that could not be started (see StartError). */
function notStarted(problem: string): EngineProcess {
  const exited = Promise.resolve({ code: null, signal: null, spawnError: problem });
  return { pid: null, exited, stop: () => exited, write: () => false, redirectLogs: () => undefined, detach: () => Promise.resolve() };
}
