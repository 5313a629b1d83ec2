import { createWriteStream, type WriteStream } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import { LineSplitter } from '../../rpc/framing.js';
import type { Clock } from '../clock.js';
import type { ProcessRecord } from '../store/store.js';
import { bwrapArgv } from '../sandbox/bwrap.js';
import type { SandboxPlan } from '../sandbox/plan.js';
import { StartError, type Containment, type Hold } from './containment.js';
import { execError } from './executable.js';
import { JOB_MARK } from './proc.js';
import type { Survivors } from './survivors.js';

/** Engine output lines longer than this are dropped (the rest of the turn is still read). */
export const MAX_ENGINE_LINE_BYTES = 2 * 1024 * 1024;
/** After the leader exits, how long its output pipes may stay open (held by a straggler) before we stop reading. */
export const DRAIN_AFTER_EXIT_MS = 2000;

export type OutputStream = 'stdout' | 'stderr';

export interface SpawnRequest {
  /** Full argv: executable first. */
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** The job the process works for: set as `JOB_MARK` in its environment, used to find its tools and to name its cgroup. */
  mark: string;
  /** The sandbox it runs in (docs/sandbox.md); null: none. */
  sandbox: SandboxPlan | null;
  stdin: 'ignore' | 'pipe';
  /** Raw output is appended here, byte for byte. */
  logs: Record<OutputStream, string>;
  onLine(stream: OutputStream, text: string): void;
  onOverflow(stream: OutputStream, bytes: number): void;
}

/** How a process ended. `spawnError` is set when it never started: the OS error code, e.g. `ENOENT`. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
  spawnError: string | null;
}

/** A running engine process: the leader of its own process group. */
export interface EngineProcess {
  readonly pid: number | null;
  readonly exited: Promise<ExitInfo>;
  /**
   * The stop sequence of its containment (SIGTERM, the grace period, then SIGKILL to what the
   * containment holds); resolves once the leader has exited and none of them is left. Idempotent.
   */
  stop(): Promise<ExitInfo>;
  /** Writes to stdin (sticky transport); false when stdin is not open. */
  write(text: string): boolean;
  endInput(): void;
  /** Sends further raw output to other files (a sticky process's next attempt). */
  redirectLogs(logs: Record<OutputStream, string>): void;
}

/** Starts engine processes, and stops what a crashed daemon left of them. */
export interface Spawner {
  spawn(request: SpawnRequest): EngineProcess;
  /** Stops what outlived a crashed daemon, of the jobs that `ownsJob` accepts (restart recovery). */
  stopSurvivors(records: readonly ProcessRecord[], ownsJob: (jobId: string) => boolean): Promise<Survivors>;
}

/** The real spawner: the only user of execa. Each engine process is held by `containment`. */
export function createSpawner(clock: Clock, containment: Containment): Spawner {
  return {
    spawn(request) {
      let hold: Hold;
      try {
        hold = containment.hold(sandboxed(request));
      } catch (error) {
        if (error instanceof StartError) return notStarted(error.message);
        throw error;
      }
      return new ExecaProcess(startEngine(hold.argv, request), request, clock, hold);
    },
    stopSurvivors: (records, ownsJob) => containment.stopSurvivors(records, ownsJob),
  };
}

/**
 * The launch of a request: its argv, run in its sandbox when it has one. The sandbox's outer
 * process is then the leader (a stop spares it its SIGTERM), and a missing engine is said as it
 * is without one, rather than by the sandbox's exit code.
 */
function sandboxed(request: SpawnRequest): { argv: readonly string[]; cwd: string; env: Readonly<Record<string, string>>; mark: string; spareLeader: boolean } {
  const { argv, cwd, env, mark, sandbox } = request;
  if (sandbox === null) return { argv, cwd, env, mark, spareLeader: false };
  const cannotExec = execError(argv[0] ?? '', env['PATH'], cwd);
  if (cannotExec !== null) throw new StartError(cannotExec);
  return { argv: bwrapArgv(sandbox, argv), cwd, env, mark, spareLeader: true };
}

/** Starts `argv` (the engine's, as its hold has it) as the leader of its own process group. */
function startEngine(argv: readonly string[], request: SpawnRequest) {
  const [file, ...args] = argv as [string, ...string[]];
  return execa(file, args, {
    cwd: request.cwd,
    env: { ...request.env, [JOB_MARK]: request.mark },
    extendEnv: false,
    stdin: request.stdin,
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
    encoding: 'buffer',
  });
}

type EngineChild = ReturnType<typeof startEngine>;

/** A process that could not be started (see StartError). */
function notStarted(problem: string): EngineProcess {
  const exited = Promise.resolve({ code: null, signal: null, spawnError: problem });
  return { pid: null, exited, stop: () => exited, write: () => false, endInput: () => undefined, redirectLogs: () => undefined };
}

class ExecaProcess implements EngineProcess {
  readonly pid: number | null;
  readonly exited: Promise<ExitInfo>;
  readonly #clock: Clock;
  readonly #hold: Hold;
  readonly #stdin: NodeJS.WritableStream | null;
  #stopping: Promise<ExitInfo> | null = null;
  #leaderGone = false;
  readonly #logs: Record<OutputStream, WriteStream>;

  constructor(child: EngineChild, request: SpawnRequest, clock: Clock, hold: Hold) {
    this.#clock = clock;
    this.#hold = hold;
    this.pid = child.pid ?? null;
    this.#stdin = request.stdin === 'pipe' ? child.stdin : null;
    this.#stdin?.on('error', () => undefined);
    this.#logs = { stdout: openLog(request.logs.stdout), stderr: openLog(request.logs.stderr) };
    const drained = Promise.all([this.#pipe(child.stdout, 'stdout', request), this.#pipe(child.stderr, 'stderr', request)]);
    const leaderExit = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => resolve(request.sandbox === null ? { code, signal, spawnError: null } : sandboxExit(code, signal)));
      void child.then((result) => {
        // The code alone: execa's message repeats the whole command line, prompt included.
        if (this.pid === null || result.exitCode === undefined) resolve({ code: null, signal: null, spawnError: result.code ?? 'spawn failed' });
      });
    });
    this.exited = leaderExit.then(async (info) => {
      this.#leaderGone = true;
      // What the engine left running is stopped by its hold, in parallel with the last reads.
      const drainedInTime = Promise.race([drained, new Promise<void>((resolve) => this.#clock.setTimer(DRAIN_AFTER_EXIT_MS, resolve))]);
      await Promise.all([this.#hold.release(this.pid), drainedInTime]);
      child.stdout?.destroy();
      child.stderr?.destroy();
      return info;
    });
  }

  stop(): Promise<ExitInfo> {
    if (this.#stopping !== null) return this.#stopping;
    const pid = this.pid;
    const treeGone = pid !== null && !this.#leaderGone ? this.#hold.stop(pid) : Promise.resolve();
    this.#stopping = Promise.all([this.exited, treeGone]).then(([info]) => info);
    return this.#stopping;
  }

  write(text: string): boolean {
    if (this.#stdin === null || this.#leaderGone) return false;
    return this.#stdin.write(text) || true;
  }

  endInput(): void {
    this.#stdin?.end();
  }

  redirectLogs(logs: Record<OutputStream, string>): void {
    for (const name of ['stdout', 'stderr'] as const) {
      this.#logs[name].end();
      this.#logs[name] = openLog(logs[name]);
    }
  }

  #pipe(stream: Readable | null, name: OutputStream, request: SpawnRequest): Promise<void> {
    const splitter = new LineSplitter(MAX_ENGINE_LINE_BYTES, {
      line: (text) => request.onLine(name, text),
      overflow: (bytes) => request.onOverflow(name, bytes),
    });
    return new Promise((resolve) => {
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        splitter.end();
        this.#logs[name].end(() => resolve());
      };
      if (stream === null) {
        finish();
        return;
      }
      stream.on('data', (chunk: Buffer) => {
        this.#logs[name].write(chunk);
        splitter.push(chunk);
      });
      stream.once('end', finish);
      stream.once('error', finish);
      stream.once('close', finish);
    });
  }
}

/**
 * How the engine in a sandbox ended, from how the sandbox did: bubblewrap exits with the engine's
 * code, or with 128 + the signal that ended it, as a shell does.
 */
export function sandboxExit(code: number | null, signal: NodeJS.Signals | null): ExitInfo {
  const name = code !== null && code > 128 ? signalName(code - 128) : null;
  return name === null ? { code, signal, spawnError: null } : { code: null, signal: name, spawnError: null };
}

function signalName(number: number): NodeJS.Signals | null {
  const found = Object.entries(constants.signals).find(([, value]) => value === number);
  return found === undefined ? null : (found[0] as NodeJS.Signals);
}

function openLog(path: string): WriteStream {
  const log = createWriteStream(path, { flags: 'a' });
  log.on('error', () => undefined); // a log that cannot be written must not take the daemon down
  return log;
}
