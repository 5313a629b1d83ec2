import type { Clock } from '../base/clock.js';
import type { ParsedTurn, TurnParser } from '../engines/engine.js';
import { StderrNotes, quoteText } from '../engines/error-lines.js';
import { explainByProvider, reportSign, type ErrorFields } from '../engines/provider-errors.js';
import type { EngineLimits, LimitHit } from '../process/cgroup-limits.js';
import type { EngineProcess, ExitInfo, OutputStream, Spawner } from '../process/spawn.js';
import type { SandboxPlan } from '../sandbox/plan.js';
import type { Usage } from '../model/usage.js';
import type { ProcessOutcome } from '../model/gate.js';

export type StopReason = 'canceled' | 'timeout';

/** What starting an engine process takes, for a single turn or a sticky session. */
export interface LaunchSpec {
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** The job id, marking the process and its tools (see `JOB_MARK`). */
  mark: string;
  /** The sandbox the process runs in; null: none. */
  sandbox: SandboxPlan | null;
  /** What the process and all it starts may use (cgroup-limits.ts); null: no limits. */
  limits: EngineLimits | null;
  /** The job's engine folder: where its engine process's keeper is recorded (docs/restarts.md). */
  keeperDir: string;
  /** The attempt's log files. */
  logs: Record<OutputStream, string>;
  onOutput(stream: OutputStream, text: string): void;
}

export interface TurnSpec extends LaunchSpec {
  parser: TurnParser;
  hardTimeoutMs: number;
  /** Whether this turn resumes a saved engine session (a failure then means the session is gone). */
  resuming: boolean;
  /** The session a resume asked for: an engine that answers from another session did not resume. */
  expectedSession?: string | null;
  /** The prompt the engine reads on stdin to its end; null: stdin is empty (the prompt is in argv). */
  stdin: string | null;
}

export interface TurnReport {
  outcome: ProcessOutcome;
  parsed: ParsedTurn;
  exit: ExitInfo;
  pid: number | null;
  /** What the turn's model calls used, where known, and what it covers (provider-guard.ts); set by the launcher. */
  usage?: { used: Usage; span: 'turn' | 'session' } | null;
}

/** A turn in flight: its stop control and its report. The first stop reason wins. */
export interface TurnHandle {
  readonly pid: number | null;
  stop(reason: StopReason): void;
  readonly done: Promise<TurnReport>;
  /** Leaves the process to its keeper (the daemon is going away): `done` never settles. */
  detach(): Promise<void>;
}

/** What a one-shot turn records with its keeper, to be taken up after a restart. */
export interface TurnNote {
  kind: 'turn';
  resuming: boolean;
  expected_session: string | null;
}

export const STDERR_TAIL_LINES = 5;

/** Keeps the last `STDERR_TAIL_LINES` non-blank stderr lines, oldest first, for what bubblewrap says of a start that failed. */
export function keepTail(tail: string[], line: string): void {
  if (line.trim() === '') return;
  if (tail.length >= STDERR_TAIL_LINES) tail.shift();
  tail.push(line);
}

/** What stands in a job's output for a line too long to keep. */
export function overflowText(bytes: number): string {
  return `[skilld: a line of more than ${bytes} bytes was dropped]`;
}

/** What a turn's output feeds: its parser always, and the job's events for what is new. */
class TurnOutput {
  sawOutput = false;
  readonly stderrTail: string[] = [];
  readonly stderr = new StderrNotes();
  readonly #spec: TurnSpec;

  constructor(spec: TurnSpec) {
    this.#spec = spec;
  }

  line(stream: OutputStream, text: string, replayed: boolean): void {
    if (stream === 'stdout' && text.trim() !== '') this.sawOutput = true;
    if (stream === 'stderr') {
      keepTail(this.stderrTail, text);
      this.stderr.line(text);
    }
    this.#spec.parser.line(stream, text);
    if (!replayed) this.#spec.onOutput(stream, text);
  }

  overflow(stream: OutputStream, bytes: number, replayed: boolean): void {
    if (!replayed) this.#spec.onOutput(stream, overflowText(bytes));
  }
}

/** Runs one per-turn engine process under a hard timeout and reads its output as it comes. */
export function startTurn(spawner: Spawner, clock: Clock, spec: TurnSpec): TurnHandle {
  const output = new TurnOutput(spec);
  const note: TurnNote = { kind: 'turn', resuming: spec.resuming, expected_session: spec.expectedSession ?? null };
  const proc = spawner.spawn({
    argv: spec.argv,
    cwd: spec.cwd,
    env: spec.env,
    mark: spec.mark,
    sandbox: spec.sandbox,
    limits: spec.limits,
    stdin: spec.stdin === null ? 'ignore' : { text: spec.stdin },
    keeper: { dir: spec.keeperDir, stdout: spec.logs.stdout, stderr: spec.logs.stderr, note },
    onLine: (stream, text, replayed) => output.line(stream, text, replayed),
    onOverflow: (stream, bytes, replayed) => output.overflow(stream, bytes, replayed),
  });
  return watchTurn(proc, clock, spec, output, spec.hardTimeoutMs);
}

/**
 * Takes up a turn whose process an earlier daemon started (docs/restarts.md): its output is read
 * again from the start, `skip` lines of each stream as already told, and it runs on for what is
 * left of its hard timeout (none: it is stopped at once, as it would have been). What the turn
 * resumed is read from its keeper's record, whose pid is given back (the process's record in the
 * store is under it, though an engine that ended meanwhile has no pid to stop).
 */
export async function adoptTurn(spawner: Spawner, clock: Clock, base: Omit<TurnSpec, 'resuming' | 'expectedSession' | 'stdin'>, skip: Record<OutputStream, number>): Promise<{ turn: TurnHandle; keeperPid: number } | { problem: string }> {
  const spec: TurnSpec = { ...base, resuming: false, expectedSession: null, stdin: null };
  const output = new TurnOutput(spec);
  const adopted = await spawner.adopt({
    dir: spec.keeperDir,
    skip,
    onLine: (stream, text, replayed) => output.line(stream, text, replayed),
    onOverflow: (stream, bytes, replayed) => output.overflow(stream, bytes, replayed),
  });
  if ('problem' in adopted) return { problem: adopted.problem };
  const note = adopted.record.note as Partial<TurnNote> | null;
  if (note?.kind !== 'turn') {
    void adopted.process.stop();
    return { problem: 'its keeper holds no turn of a one-shot engine' };
  }
  spec.resuming = note.resuming === true;
  spec.expectedSession = note.expected_session ?? null;
  const deadline = Date.parse(adopted.record.started_at) + spec.hardTimeoutMs;
  // An engine that ended while no daemon was there ended as it did, unless that was past its deadline.
  const timeoutMs = adopted.endedAt === null ? deadline - clock.now().getTime() : adopted.endedAt.getTime() > deadline ? 0 : Number.POSITIVE_INFINITY;
  return { turn: watchTurn(adopted.process, clock, spec, output, timeoutMs), keeperPid: adopted.record.pid };
}

function watchTurn(proc: EngineProcess, clock: Clock, spec: TurnSpec, output: TurnOutput, timeoutMs: number): TurnHandle {
  let stopReason: StopReason | null = null;
  let stopped: Promise<unknown> = Promise.resolve();
  const stop = (reason: StopReason): void => {
    if (stopReason !== null) return;
    stopReason = reason;
    stopped = proc.stop();
  };
  const timer = Number.isFinite(timeoutMs) ? clock.setTimer(Math.max(0, timeoutMs), () => stop('timeout')) : { cancel: () => undefined };
  const done = proc.exited.then(async (exit): Promise<TurnReport> => {
    timer.cancel();
    // A stopped turn ends once its whole process tree is gone, not only its leader.
    await stopped;
    const parsed = spec.parser.result();
    const seen: Seen = { sawOutput: output.sawOutput, stderrTail: output.stderrTail, stderr: output.stderr, engineError: parsed.engineError };
    const ended = checkTurnEnd(classify(exit, stopReason, spec, seen), spec.parser.turnEnded, spec.resuming);
    const explained = checkProvider(ended, parsed.engineError, spec.parser.errorFields ?? null, output.stderr);
    const outcome = checkResumed(explained, parsed.sessionId, spec.resuming);
    return { outcome: checkSession(outcome, parsed.sessionId, spec.expectedSession ?? null), parsed, exit, pid: proc.pid };
  });
  const detach = (): Promise<void> => {
    timer.cancel();
    return proc.detach();
  };
  return { pid: proc.pid, stop, done, detach };
}

/** What `classify` reads of a turn's output. */
export interface Seen {
  sawOutput: boolean;
  /** The last non-blank stderr lines (`keepTail`). */
  stderrTail: string[];
  /** What the whole stderr said; absent: the tail stands for it. */
  stderr?: StderrNotes;
  /** The error the engine reported in its output (`ParsedTurn.engineError`), which explains an exit better than its stderr. */
  engineError?: string | null;
}

/** How a turn's process ended, decided before its messages are looked at. */
export function classify(exit: ExitInfo, stopReason: StopReason | null, spec: Pick<TurnSpec, 'argv' | 'hardTimeoutMs' | 'resuming'>, seen: Seen): ProcessOutcome {
  const spawnError = exit.spawnError ?? sandboxExecError(exit, seen);
  if (spawnError !== null) {
    const message = `cannot start ${spec.argv[0] ?? 'engine'}: ${spawnError}`;
    // The job ends here, and its session with it: retrying the reply cannot help.
    return spec.resuming ? { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: `${message}; the session was not resumed` } : { kind: 'failed', code: 'ENGINE_SPAWN_FAILED', message };
  }
  if (stopReason === 'canceled') return { kind: 'canceled' };
  if (stopReason === 'timeout') return { kind: 'failed', code: 'TIMEOUT', message: `turn exceeded hard_timeout_sec (${spec.hardTimeoutMs / 1000} s) and was stopped` };
  if (exit.code === 0) return { kind: 'ok' };
  const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  if (exit.limit !== undefined) return limitOutcome(exit.limit, how);
  const said = whatItSaid(seen);
  const tail = said === null ? '' : `: ${said}`;
  // A resume that dies before printing anything found no session to continue (PR-14).
  if (spec.resuming && !seen.sawOutput) return { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: `resume ${how}${tail}` };
  return { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: `engine ${how}${tail}` };
}

/**
 * What an engine that exited said of why, as its failure's message quotes it (error-lines.ts): the
 * error it reported in its output, else its stderr's first meaningful line (and its last).
 */
function whatItSaid(seen: Seen): string | null {
  const reported = quoteText(seen.engineError ?? null);
  if (reported !== null) return reported;
  if (seen.stderr !== undefined) return seen.stderr.summary();
  const notes = new StderrNotes();
  for (const line of seen.stderrTail) notes.line(line);
  return notes.summary();
}

/**
 * A failed turn that the engine's words put down to its model provider (provider-errors.ts): the
 * error it reported in its output decides where there is one (with the fields it gave with it),
 * else the last lines of its stderr; the message quotes the one or the other's first line.
 */
export function checkProvider(outcome: ProcessOutcome, engineError: string | null, fields: ErrorFields | null, stderr: StderrNotes): ProcessOutcome {
  if (engineError !== null) return explainByProvider(outcome, reportSign(engineError, fields), quoteText(engineError));
  return explainByProvider(outcome, stderr.sign, stderr.first);
}

/** A turn that failed after running into a limit of its job: that is why, whatever else it said. */
export function limitOutcome(hit: LimitHit, how: string): ProcessOutcome {
  const value = hit.limit === 'memory' ? `${hit.value} bytes` : `${hit.value} processes`;
  return { kind: 'failed', code: 'JOB_LIMIT_EXCEEDED', message: `the engine ran into the job's ${hit.limit} limit (${value}) and ${how}`, details: { limit: hit.limit, value: hit.value } };
}

/** What bubblewrap, or setpriv where the daemon is root, says when the engine cannot be started in its sandbox. */
const SANDBOX_EXEC_FAILED = /^(?:bwrap: execvp [^:]*|setpriv: failed to execute [^:]*): (.+)$/;

/**
 * In a sandbox, an engine that cannot be started is reported by bubblewrap (exit 1, its words on
 * stderr, no output), not by the system to the daemon: the same start failure, said the same way.
 */
function sandboxExecError(exit: ExitInfo, seen: { sawOutput: boolean; stderrTail: string[] }): string | null {
  if (exit.code !== 1 || seen.sawOutput) return null;
  const said = seen.stderrTail.map((line) => SANDBOX_EXEC_FAILED.exec(line)).find((match) => match !== null);
  return said === undefined ? null : `${said[1] ?? ''} in the job's sandbox`;
}

/**
 * A clean exit without the engine's turn-end signal is an interrupted turn (a Gemini killed by
 * someone else exits 0 with no result), never a success; for a resume it means nothing resumed.
 */
export function checkTurnEnd(outcome: ProcessOutcome, turnEnded: boolean, resuming: boolean): ProcessOutcome {
  if (outcome.kind !== 'ok' || turnEnded) return outcome;
  if (resuming) return { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: 'the resumed engine exited without finishing a turn' };
  return { kind: 'failed', code: 'ENGINE_TURN_INTERRUPTED', message: 'the engine exited without finishing its turn (no turn-end signal in its output)' };
}

/**
 * A resume that exits non-zero without its output naming any session never got into one: Claude
 * Code answers an unknown id with an error `result` alone (no `init`), exit 1. Retrying cannot help.
 */
export function checkResumed(outcome: ProcessOutcome, sessionId: string | null, resuming: boolean): ProcessOutcome {
  if (!resuming || sessionId !== null || outcome.kind !== 'failed' || outcome.code !== 'ENGINE_EXIT_NONZERO') return outcome;
  return { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: `resume failed before any session was reported: ${outcome.message}` };
}

/** Codex starts a fresh thread, exit 0, when asked to resume an id it does not know as a thread. */
function checkSession(outcome: ProcessOutcome, got: string | null, expected: string | null): ProcessOutcome {
  if (outcome.kind !== 'ok' || expected === null || got === null || got === expected) return outcome;
  return { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: `asked to resume session ${expected} but the engine answered from session ${got}` };
}
