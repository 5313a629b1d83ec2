import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BWRAP } from '../sandbox/bwrap.js';
import { JOIN_NAME } from './cgroup.js';

/**
 * Keepers (docs/restarts.md): what holds an engine process while the daemon comes and goes. Each
 * engine is started by a keeper, its parent for life, which the daemon does not need: a shell
 * (`/bin/sh`, a few hundred KiB) or, in a sandbox, the sandbox's own outer process. The engine's
 * output goes to files, its input comes from a file or a FIFO, and the keeper writes the engine's
 * exit status to a file when it ends, so that a daemon that was away learns how it ended. What
 * the daemon needs to find it again is in the keeper's record, `keeper.json`, in its folder.
 */

/**
 * The keeper protocol: the record's fields, the files and their formats. A daemon reads every
 * version it knows and never changes a keeper that runs; one it does not know (a downgrade) is not
 * taken up: its processes are stopped and its job settled, as for a keeper that is gone.
 */
export const KEEPER_VERSION = 1;
/** The versions of the keeper protocol this daemon can take up again. */
export const KNOWN_KEEPER_VERSIONS: readonly number[] = [1];

/** Where the daemon writes the exit status to: the keeper's fd 3. */
const STATUS_FD = 3;

/**
 * The gate: the keeper's fd 4, a pipe from the daemon. What is spawned first waits on it, and
 * runs the keeper only once the daemon has written the keeper's record and then a line to it. A
 * daemon that dies before (the end of the pipe closes) starts nothing: the gate writes a status
 * that says so and exits. So an engine runs only if its record was written, and a restart can
 * tell a turn that never began from one whose keeper is gone.
 */
export const GATE_FD = 4;

const GATE = `read -r go <&${GATE_FD} || { printf '{ "not-started": true }\\n' >&${STATUS_FD}; exit 125; }; exec ${GATE_FD}<&-`;

/**
 * The argv that waits at the gate, then runs `argv` (the keeper, or the shell that joins its
 * groups first) in its place. In front of that shell the gate is one more line of its script: one
 * shell fewer to start.
 */
export function gatedArgv(argv: readonly string[]): string[] {
  const [shell, c, script, name, ...rest] = argv;
  if (shell === '/bin/sh' && c === '-c' && name === JOIN_NAME && script !== undefined) return ['/bin/sh', '-c', `${GATE}; ${script}`, JOIN_NAME, ...rest];
  return ['/bin/sh', '-c', `${GATE}; exec "$@"`, 'skilld-gate', ...argv];
}

/** The keeper's files in its folder. */
export const KEEPER_FILES = { record: 'keeper.json', stopped: 'keeper.stopped.json', status: 'exit-status', stdin: 'stdin' } as const;

/**
 * The shell keeper: runs the engine (its fd 3 closed), then writes its exit status as a sandbox's
 * outer process does (`--json-status-fd`): `{ "exit-code": N }`, N being 128 + the signal for an
 * engine killed by one.
 */
const SHELL_KEEPER = `"$@" ${STATUS_FD}>&-; printf '{ "exit-code": %d }\\n' $? >&${STATUS_FD}`;

/** The argv of a keeper that runs `argv`; `sandboxArgs` (a bubblewrap argv that ends with its `--`) makes the sandbox the keeper. */
export function keeperArgv(argv: readonly string[], sandboxArgs: readonly string[] | null): string[] {
  if (sandboxArgs === null) return ['/bin/sh', '-c', SHELL_KEEPER, 'skilld-keeper', ...argv];
  const [bwrap, ...rest] = sandboxArgs;
  if (bwrap !== BWRAP) throw new Error('a sandbox keeper must be bubblewrap');
  return [BWRAP, '--json-status-fd', String(STATUS_FD), ...rest, ...argv];
}

/** Where an engine process is held, as containment recorded it. */
export type Place = { kind: 'cgroup'; path: string } | { kind: 'process_group' };

/** What a keeper's record holds: enough to find its engine again, and to tell it from a recycled pid. */
export interface KeeperRecord {
  keeper: number;
  /** The job it works for (`JOB_MARK`). */
  job_id: string;
  /** The keeper's pid and start time (clock ticks since boot, /proc/<pid>/stat). */
  pid: number;
  start_time: string;
  /** The machine's boot: after a reboot nothing recorded is alive, whatever the pids say. */
  boot_id: string;
  started_at: string;
  place: Place;
  /** The engine's output files and whether its stdin is the keeper's FIFO. */
  stdout: string;
  stderr: string;
  live_input: boolean;
  /** What the process's owner needs to take it up again (the job layer's, opaque here). */
  note: unknown;
}

export function writeRecord(dir: string, record: KeeperRecord): void {
  const path = join(dir, KEEPER_FILES.record);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/**
 * A new engine process is about to be started for the job: the record of the one before (taken
 * up or stopped on purpose) is no record of it.
 */
export function forgetRecord(dir: string): void {
  rmSync(join(dir, KEEPER_FILES.record), { force: true });
  rmSync(join(dir, KEEPER_FILES.stopped), { force: true });
}

/**
 * Whether an engine process was started since the job's last `forgetRecord`: its keeper's record
 * is written as it is spawned (before its gate opens), and put aside (not removed) when the daemon
 * stops it. Neither there, or a gate that closed without opening: the turn's engine never ran.
 */
export function turnWasStarted(dir: string): boolean {
  if (!existsSync(join(dir, KEEPER_FILES.record)) && !existsSync(join(dir, KEEPER_FILES.stopped))) return false;
  try {
    return !readFileSync(join(dir, KEEPER_FILES.status), 'utf8').includes('"not-started": true');
  } catch {
    return true;
  }
}

/** A process the daemon stopped itself is never taken up again: its record is put aside. */
export function setRecordAside(dir: string): void {
  try {
    renameSync(join(dir, KEEPER_FILES.record), join(dir, KEEPER_FILES.stopped));
  } catch {
    // none recorded
  }
}

/** A keeper's record, or why there is none to use. */
export function readRecord(dir: string): KeeperRecord | { problem: string } {
  let text: string;
  try {
    text = readFileSync(join(dir, KEEPER_FILES.record), 'utf8');
  } catch {
    if (existsSync(join(dir, KEEPER_FILES.stopped))) return { problem: 'the daemon stopped it on purpose (a stop of the daemon with its engines, a cancel or a timeout)' };
    return { problem: 'no keeper was recorded' };
  }
  let record: Partial<KeeperRecord>;
  try {
    record = JSON.parse(text) as Partial<KeeperRecord>;
  } catch {
    return { problem: 'its keeper record cannot be read' };
  }
  if (typeof record.keeper !== 'number' || !KNOWN_KEEPER_VERSIONS.includes(record.keeper)) return { problem: `its keeper speaks protocol version ${String(record.keeper)}, which this daemon does not know` };
  return record as KeeperRecord;
}

/** How the engine ended, by its keeper's status file: null while it runs (or when its keeper died first). */
export function readExitCode(dir: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(dir, KEEPER_FILES.status), 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    try {
      const code = (JSON.parse(line) as { 'exit-code'?: unknown })['exit-code'];
      if (typeof code === 'number') return code;
    } catch {
      // a line being written, or another of the sandbox's lines
    }
  }
  return null;
}

let bootId: string | null = null;

/** This boot of the machine. */
export function currentBootId(): string {
  bootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return bootId;
}
