import { execFileSync } from 'node:child_process';
import { constants as fsConstants, createWriteStream, openSync, rmSync, type WriteStream } from 'node:fs';
import { Socket } from 'node:net';
import { constants } from 'node:os';
import type { LimitHit } from './cgroup-limits.js';
import type { Hold } from './containment.js';
import { FileFollower } from './file-follower.js';
import { readExitCode, setRecordAside } from './keeper.js';

/** Engine output lines longer than this are dropped (the rest of the turn is still read). */
export const MAX_ENGINE_LINE_BYTES = 2 * 1024 * 1024;

export type OutputStream = 'stdout' | 'stderr';

/** How a process ended. `spawnError` is set when it never started: the OS error code, e.g. `ENOENT`. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
  spawnError: string | null;
  /** A limit of the job's the process (or what it started) ran into (cgroup-limits.ts). */
  limit?: LimitHit;
}

/** Where an engine's output goes as it is read. */
export interface OutputSink {
  /** Each line, once; `replayed` for the lines an earlier daemon had already taken (see FileFollower). */
  onLine(stream: OutputStream, text: string, replayed: boolean): void;
  onOverflow(stream: OutputStream, bytes: number, replayed: boolean): void;
  /** New raw output is copied here as well, byte for byte (the attempts of a live process); null: not. */
  copyTo?: Record<OutputStream, string> | null;
}

/** A running engine process, held by its keeper: the leader of its own process group. */
export interface EngineProcess {
  readonly pid: number | null;
  /** Resolves once the engine has ended and all its output is read; never, after `detach`. */
  readonly exited: Promise<ExitInfo>;
  /**
   * The stop sequence of its containment (SIGTERM, the grace period, then SIGKILL to what the
   * containment holds); resolves once the keeper has exited and none of them is left. Idempotent.
   */
  stop(): Promise<ExitInfo>;
  /** Writes to its live input (a live process); false when it has none, or has ended. */
  write(text: string): boolean;
  /** Copies further output to other files (a live process's next attempt). */
  redirectLogs(logs: Record<OutputStream, string>): void;
  /** Stops reading and writing, and leaves the process to its keeper (the daemon is going away). */
  detach(): Promise<void>;
}

/** How the keeper's own end is awaited: its exit as a child, or a watch from a later daemon. */
export interface KeeperEnd {
  ended: Promise<ExitInfo>;
  /** Stops watching (detach). */
  cancel(): void;
}

export interface KeptParts {
  pid: number | null;
  dir: string;
  hold: Hold;
  sink: OutputSink;
  files: Record<OutputStream, string>;
  /** Lines of each stream an earlier daemon took already. */
  skip: Record<OutputStream, number>;
  /** The FIFO that is the engine's live input; null: none. */
  input: string | null;
  end: KeeperEnd;
}

/** Makes a FIFO only its owner may use; returns its path. */
export function makeFifo(path: string): string {
  execFileSync('mkfifo', ['-m', '600', path]);
  return path;
}

/**
 * One engine process and its keeper, as the daemon sees it: output read from the files the engine
 * writes, input written to its FIFO, and its end learned from the keeper's exit status.
 */
export class KeptProcess implements EngineProcess {
  readonly pid: number | null;
  readonly exited: Promise<ExitInfo>;
  readonly #dir: string;
  readonly #hold: Hold;
  readonly #end: KeeperEnd;
  readonly #followers: FileFollower[];
  readonly #input: Socket | null;
  #copies: Record<OutputStream, WriteStream> | null;
  #stopping: Promise<ExitInfo> | null = null;
  #leaderGone = false;

  constructor(p: KeptParts) {
    this.pid = p.pid;
    this.#dir = p.dir;
    this.#hold = p.hold;
    this.#end = p.end;
    this.#copies = p.sink.copyTo == null ? null : openCopies(p.sink.copyTo);
    this.#followers = (['stdout', 'stderr'] as const).map(
      (stream) =>
        new FileFollower(p.files[stream], MAX_ENGINE_LINE_BYTES, p.skip[stream], {
          line: (text, replayed) => p.sink.onLine(stream, text, replayed),
          overflow: (bytes, replayed) => p.sink.onOverflow(stream, bytes, replayed),
          bytes: (chunk) => this.#copies?.[stream].write(chunk),
        }),
    );
    this.#input = p.input === null ? null : openInput(p.input);
    this.exited = p.end.ended.then(async (keeperExit) => {
      this.#leaderGone = true;
      const code = keeperExit.spawnError === null ? readExitCode(p.dir) : null;
      // Without a status, the keeper itself was ended (the stop's SIGKILL, or someone else's).
      const ended = code === null ? keeperExit : exitOf(code, null);
      // Read before the hold lets its cgroups go.
      const limit = this.#hold.limitHit?.() ?? null;
      const info = limit === null ? ended : { ...ended, limit };
      // What the engine left running is stopped by its hold, in parallel with the last reads.
      await Promise.all([this.#hold.release(this.pid), ...this.#followers.map((f) => f.finish())]);
      this.#close();
      // Nothing reads it any more; a run folder keeps only regular files (copies and backups of it work).
      if (p.input !== null) rmSync(p.input, { force: true });
      return info;
    });
  }

  stop(): Promise<ExitInfo> {
    if (this.#stopping !== null) return this.#stopping;
    const pid = this.pid;
    const treeGone = pid !== null && !this.#leaderGone ? this.#hold.stop(pid) : Promise.resolve();
    this.#stopping = Promise.all([this.exited, treeGone]).then(([info]) => {
      setRecordAside(this.#dir);
      return info;
    });
    return this.#stopping;
  }

  write(text: string): boolean {
    const input = this.#input;
    if (input === null || this.#leaderGone || input.destroyed) return false;
    input.write(text);
    return true;
  }

  redirectLogs(logs: Record<OutputStream, string>): void {
    for (const copy of Object.values(this.#copies ?? {})) copy.end();
    this.#copies = openCopies(logs);
  }

  async detach(): Promise<void> {
    this.#end.cancel();
    await Promise.all(this.#followers.map((f) => f.close()));
    this.#close();
  }

  #close(): void {
    this.#input?.destroy();
    for (const copy of Object.values(this.#copies ?? {})) copy.end();
  }
}

/** The daemon's end of a live input: non-blocking, so that an engine that stops reading cannot stall the daemon. */
function openInput(path: string): Socket | null {
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
  } catch {
    return null; // no reader: the engine is gone
  }
  const socket = new Socket({ fd, readable: false, writable: true });
  socket.on('error', () => socket.destroy());
  return socket;
}

function openCopies(logs: Record<OutputStream, string>): Record<OutputStream, WriteStream> {
  const open = (path: string): WriteStream => createWriteStream(path, { flags: 'a' }).on('error', () => undefined);
  return { stdout: open(logs.stdout), stderr: open(logs.stderr) };
}

/**
 * How the engine ended, from its exit code as a keeper reports it: bubblewrap and the shell
 * keeper both give the engine's code, or 128 + the signal that ended it, as a shell does.
 */
export function exitOf(code: number | null, signal: string | null): ExitInfo {
  const name = code !== null && code > 128 ? signalName(code - 128) : null;
  return name === null ? { code, signal, spawnError: null } : { code: null, signal: name, spawnError: null };
}

function signalName(number: number): NodeJS.Signals | null {
  const found = Object.entries(constants.signals).find(([, value]) => value === number);
  return found === undefined ? null : (found[0] as NodeJS.Signals);
}
