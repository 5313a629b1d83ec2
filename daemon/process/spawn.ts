import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { execa } from 'execa';
import type { Clock } from '../base/clock.js';
import type { ProcessRecord } from '../store/store.js';
import { prepareSandbox, type SandboxLaunch } from '../sandbox/launch.js';
import { OpenPathError } from '../sandbox/open-path.js';
import type { SandboxPlan } from '../sandbox/plan.js';
import { V1Groups, jobGroupsV1, type EngineLimits, type LimitHit, type LimitSupport } from './cgroup-limits.js';
import { StartError, type Containment, type Hold, type Launch } from './containment.js';
import { execError } from '../sandbox/executable.js';
import { GATE_FD, KEEPER_FILES, KEEPER_VERSION, currentBootId, gatedArgv, keeperArgv, writeRecord, type KeeperRecord } from './keeper.js';
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
  /** What it and all it starts may use, where the kernel enforces it (cgroup-limits.ts); null: no limits. */
  limits: EngineLimits | null;
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

/**
 * The real spawner: the only user of execa. Each engine process is started by a keeper and held
 * by `containment`, its limits set where `limits` says they can be.
 */
export function createSpawner(clock: Clock, containment: Containment, limits: LimitSupport = NO_LIMITS): Spawner {
  return {
    spawn(request) {
      const { dir } = request.keeper;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      let hold;
      let launched;
      let sandbox: SandboxLaunch | null = null;
      let groups: V1Groups | null = null;
      try {
        const cannotExec = execError(request.argv[0] ?? '', request.env['PATH'], request.cwd);
        if (cannotExec !== null) throw new StartError(cannotExec);
        // The sandbox's paths are opened once, here, and handed to it as descriptors with its options (launch.ts).
        if (request.sandbox !== null) sandbox = prepareSandbox(request.sandbox, request.argv, { ...request.env, [JOB_MARK]: request.mark }, dir, SANDBOX_FIRST_FD);
        groups = request.limits === null ? null : makeGroups(limits, request.mark, request.limits);
        launched = limited(kept(request, sandbox), groups, limits, request.limits);
        hold = groups === null ? containment.hold(launched) : withGroups(containment.hold(launched), groups);
      } catch (error) {
        sandbox?.close();
        groups?.remove();
        if (error instanceof StartError) return notStarted(error.message);
        if (error instanceof OpenPathError) return notStarted(`${error.message} (the job's sandbox)`);
        throw error;
      }
      const stdio = openStdio(request, sandbox?.fds ?? []);
      const child = startKeeper(gatedArgv(hold.argv), request.cwd, { ...launched.env, [JOB_MARK]: request.mark }, stdio.fds);
      for (const fd of stdio.fds.slice(0, SANDBOX_FIRST_FD)) if (typeof fd === 'number') closeSync(fd);
      sandbox?.close();
      const pid = child.pid ?? null;
      const stat = pid === null ? null : readStat(pid);
      // The record first, then the gate opens (keeper.ts): no engine runs unrecorded.
      if (pid !== null && stat !== null) writeRecord(dir, recordOf(request, pid, stat.startTime, hold.place, clock));
      (child.stdio[GATE_FD] as Writable | undefined)?.end('go\n');
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
    // An engine taken up ended: the limit groups an earlier daemon made for it go with it.
    adopt: (request) => takeUp(request, clock, { adopt: (place, mark, spareLeader) => withGroups(containment.adopt(place, mark, spareLeader), jobGroupsV1(limits, mark)) }),
    stopSurvivors: (records, ownsJob) => containment.stopSurvivors(records, ownsJob),
  };
}

/**
 * The launch of a request: its keeper running its argv, in its sandbox when it has one (the
 * sandbox's outer process is then the keeper). The keeper is the leader, which a stop spares its
 * SIGTERM: it ends by itself once the engine has.
 */
function kept(request: SpawnRequest, sandbox: SandboxLaunch | null): Launch {
  const { argv, cwd, env, mark } = request;
  if (sandbox === null) return { argv: keeperArgv(argv, null), cwd, env, mark, spareLeader: true };
  // The outer process needs the search path alone: the engine's environment is in its options.
  return { argv: keeperArgv([], sandbox.argv), cwd, env: env['PATH'] === undefined ? {} : { PATH: env['PATH'] }, mark, spareLeader: true };
}

/** Where no limit is enforced (tests of the spawner alone). */
const NO_LIMITS: LimitSupport = { processes: { by: null, problem: 'not asked' }, memory: { by: null, problem: 'not asked' } };

/** The cgroup v1 groups of a launch, where its limits are set there; a failure is a start error. */
function makeGroups(support: LimitSupport, mark: string, limits: EngineLimits): V1Groups | null {
  try {
    const groups = new V1Groups(support, mark, limits);
    return groups.dirs.length === 0 ? null : groups;
  } catch (error) {
    throw new StartError(`cannot set the job's limits: ${(error as Error).message}`, { cause: error });
  }
}

/** The launch told its cgroup v1 groups to join, and which limits its own cgroup v2 sets. */
function limited(launch: Launch, groups: V1Groups | null, support: LimitSupport, limits: EngineLimits | null): Launch {
  const names = (['processes', 'memory'] as const).filter((name) => support[name].by === 'cgroup v2');
  const joined = groups === null ? launch : { ...launch, join: groups.paths };
  return limits === null || names.length === 0 ? joined : { ...joined, limits: { values: limits, names } };
}

/**
 * A hold that also lets cgroup v1 groups go once its process has: the launch's own (whose hits it
 * reads), or those an earlier daemon made for an engine taken up. Each member of `hold` is passed
 * on by name: a hold may be a class's, whose methods a spread would leave behind.
 */
function withGroups(hold: Hold, groups: { remove(): void; hit?(): LimitHit | null }): Hold {
  return {
    argv: hold.argv,
    place: hold.place,
    stop: (pid) => hold.stop(pid),
    release: async (pid) => {
      await hold.release(pid);
      groups.remove();
    },
    limitHit: () => hold.limitHit?.() ?? groups.hit?.() ?? null,
  };
}

/** The first descriptor of a sandbox's open paths in its outer process: after stdin, stdout, stderr, the status file and the gate. */
const SANDBOX_FIRST_FD = GATE_FD + 1;

type Stdio = ['ignore' | number, number, number, number, 'pipe', ...number[]];

/** The keeper's files, made fresh, and the descriptors its process starts with (closed here once it has); `extra` follows them. */
function openStdio(request: SpawnRequest, extra: readonly number[]): { fds: Stdio; live: boolean } {
  const { dir, stdout, stderr } = request.keeper;
  for (const name of Object.values(KEEPER_FILES)) rmSync(join(dir, name), { force: true });
  let stdin: 'ignore' | number = 'ignore';
  if (request.stdin === 'live') {
    // Read and write: the engine holds a writer itself, so no daemon's going away is an end of input.
    stdin = openSync(makeFifo(join(dir, KEEPER_FILES.stdin)), 'r+');
  } else if (request.stdin !== 'ignore') {
    writeFileSync(join(dir, KEEPER_FILES.stdin), request.stdin.text, { mode: 0o600 });
    stdin = openSync(join(dir, KEEPER_FILES.stdin), 'r');
  }
  const fds: Stdio = [stdin, openSync(stdout, 'a', 0o600), openSync(stderr, 'a', 0o600), openSync(join(dir, KEEPER_FILES.status), 'w', 0o600), 'pipe', ...extra];
  return { fds, live: request.stdin === 'live' };
}

/** Starts the keeper as the leader of its own process group and session: nothing of the daemon's ending reaches it. */
function startKeeper(argv: readonly string[], cwd: string, env: Readonly<Record<string, string>>, stdio: Stdio) {
  const [file, ...args] = argv as [string, ...string[]];
  return execa(file, args, {
    cwd,
    env,
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
