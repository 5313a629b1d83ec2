import { join } from 'node:path';
import type { Clock, Timer } from '../base/clock.js';
import type { ParsedTurn } from '../engines/engine.js';
import { StderrNotes } from '../engines/error-lines.js';
import { LiveSessionClosed, type ApprovalDecision, type ApprovalRequest, type LiveEvent, type LiveProtocol, type LiveSession, type LiveStart, type LiveTurnResult } from '../engines/live-session.js';
import { MAX_ENGINE_LINE_BYTES, type EngineProcess, type ExitInfo, type OutputStream, type Spawner } from '../process/spawn.js';
import { outcomeOf, refusedOutcome } from './live-outcome.js';
import { LIVE_FILES, LiveJournal, spoolLines, type JournalEntry, type SpoolLine } from './live-journal.js';
import type { ProcessOutcome } from '../model/gate.js';
import { checkProvider, checkTurnEnd, classify, keepTail, overflowText, type LaunchSpec, type StopReason, type TurnHandle, type TurnReport } from './turn.js';

export interface StickySpec extends LaunchSpec {
  protocol: LiveProtocol;
  start: LiveStart;
  /** How long an interrupted turn may take to end by the protocol before the process tree is stopped. */
  graceMs: number;
  /** The engine reported its session id (stored as the job's handle at once). */
  onSession(sessionId: string): void;
  /** The process went away while no turn was running (the job was waiting). */
  onLost(exit: ExitInfo): void;
  /** The turn waits for `answerApproval` (approvals `ask`); one request at a time. */
  onApproval(request: ApprovalRequest): void;
  /** The agent said something: one whole message. */
  onMessage(text: string): void;
}

interface ActiveTurn {
  hardTimeoutMs: number;
  stopReason: StopReason | null;
  stderrTail: string[];
  stderr: StderrNotes;
  /** The hard timeout; paused (null) while a person decides an approval. */
  timer: Timer | null;
  /** What is left of the hard timeout, as of `armedAt`. */
  remainingMs: number;
  armedAt: number;
  /** The stop sequence, armed when an interrupt is asked for. */
  graceTimer: Timer | null;
}

const ALIVE: ExitInfo = { code: null, signal: null, spawnError: null };

/** What a session taken up after a restart holds: the session, and the handle of its last turn (in flight, or ended while no daemon heard). */
export interface AdoptedSession {
  session: StickySession;
  lastTurn: TurnHandle | null;
  /** Whether a turn is in flight (running, or waiting for an approval). */
  inFlight: boolean;
  /** The job's attempt the last turn begun was (null when its journal does not say). */
  lastTurnAttempt: number | null;
}

/** Lets whatever a replayed line set in motion (the protocol's promises, an SDK's streams) run before the next. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * One live engine process that serves every turn of a sticky job over the engine's own protocol
 * (`LiveProtocol`): the first turn opens the session, each reply is the next prompt, and a turn
 * ends at the protocol's end of turn, never at an exit. Cancel and timeouts ask the engine to
 * interrupt first and stop the process tree when it does not within `graceMs`. Every act on the
 * session is journaled first (live-journal.ts), so that a later daemon can take the session up.
 */
export class StickySession {
  readonly #clock: Clock;
  readonly #spec: StickySpec;
  readonly #session: LiveSession;
  readonly #journal: LiveJournal;
  /** Null only while a session taken up is being replayed. */
  #proc: EngineProcess | null = null;
  /** The opening, once started: its session id (or null when the engine names none there). */
  #opened: Promise<string | null> | null = null;
  #sessionId: string | null = null;
  #turn: ActiveTurn | null = null;
  #lastTurn: TurnHandle | null = null;
  #lastTurnAttempt: number | null = null;
  /** Permission requests of the turn waiting for a person, the one asked first. */
  #approvals: ApprovalRequest[] = [];
  #exit: ExitInfo | null = null;
  /** Set once the process can take no more messages (it exited, or its stdin closed). */
  #gone = false;
  #closing = false;
  #stopping: Promise<unknown> = Promise.resolve();
  /** Lines of stdout taken so far (oversized ones counted): where each journal entry stands. */
  #received = 0;
  /** While a session taken up is replayed: nothing is sent, told or journaled. */
  #replaying = false;
  #clockEntry: Extract<JournalEntry, { call: 'timer' }> | null = null;

  private constructor(clock: Clock, spec: StickySpec) {
    this.#clock = clock;
    this.#spec = spec;
    this.#journal = new LiveJournal(spec.keeperDir);
    this.#session = spec.protocol.connect({ send: (line) => this.#send(line) }, spec.start);
  }

  /** Starts a live process for a sticky job's first turn. */
  static start(spawner: Spawner, clock: Clock, spec: StickySpec): StickySession {
    const self = new StickySession(clock, spec);
    self.#journal.clear();
    self.#attach(
      spawner.spawn({
        argv: spec.argv,
        cwd: spec.cwd,
        env: spec.env,
        mark: spec.mark,
        sandbox: spec.sandbox,
        limits: spec.limits,
        stdin: 'live',
        // The process outlives attempts: its output goes to files of its own, and is copied to each attempt's logs.
        keeper: { dir: spec.keeperDir, stdout: join(spec.keeperDir, LIVE_FILES.stdout), stderr: join(spec.keeperDir, LIVE_FILES.stderr), note: { kind: 'live', start: spec.start } },
        copyTo: spec.logs,
        onLine: (stream, text) => self.#line(stream, { text }),
        onOverflow: (stream, bytes) => self.#line(stream, { overflow: bytes }),
      }),
    );
    return self;
  }

  /**
   * Takes up the live session an earlier daemon journaled (docs/restarts.md, "Live sessions"): its
   * journal is replayed against the engine's output up to where that daemon stood, nothing sent
   * and nothing told again but the lines its events do not hold (`told`), then the process is
   * taken up and the session goes on. Why not, when it cannot be.
   */
  static async adopt(spawner: Spawner, clock: Clock, spec: StickySpec, told: Record<OutputStream, number>): Promise<AdoptedSession | { problem: string }> {
    // The replay feeds the engine's answers right after the requests they answer: the protocol's code must be there first.
    await spec.protocol.load?.();
    const self = new StickySession(clock, spec);
    const entries = self.#journal.read();
    if (entries.length === 0) return { problem: 'its live session kept no journal' };
    const lines = spoolLines(spec.keeperDir, MAX_ENGINE_LINE_BYTES);
    const upTo = Math.min(lines.length, entries.reduce((most, entry) => Math.max(most, entry.at), told.stdout));
    let logs = spec.logs;
    self.#replaying = true;
    let next = 0;
    const replayUpTo = async (at: number): Promise<void> => {
      for (let entry = entries[next]; entry !== undefined && entry.at <= at; entry = entries[++next]) {
        if (entry.call === 'turn') logs = entry.logs ?? logs;
        self.#replay(entry);
        await settle();
      }
    };
    for (const [k, line] of lines.slice(0, upTo).entries()) {
      await replayUpTo(k);
      self.#stdout(line, k >= told.stdout);
      await settle();
    }
    await replayUpTo(upTo);
    self.#replaying = false;
    const adopted = await spawner.adopt({
      dir: spec.keeperDir,
      skip: { stdout: upTo, stderr: told.stderr },
      copyTo: logs,
      onLine: (stream, text, replayed) => (replayed ? undefined : self.#line(stream, { text })),
      onOverflow: (stream, bytes, replayed) => (replayed ? undefined : self.#line(stream, { overflow: bytes })),
    });
    if ('problem' in adopted) {
      self.#session.dispose(new LiveSessionClosed(adopted.problem));
      return { problem: adopted.problem };
    }
    self.#attach(adopted.process);
    self.#resumeClock();
    return { session: self, lastTurn: self.#lastTurn, inFlight: self.#turn !== null, lastTurnAttempt: self.#lastTurnAttempt };
  }

  get pid(): number | null {
    return this.#proc?.pid ?? null;
  }

  /** Resolves when the process has exited. */
  get exited(): Promise<ExitInfo> {
    return this.#proc?.exited ?? new Promise(() => undefined);
  }

  get alive(): boolean {
    return this.#exit === null;
  }

  /** Runs one turn on `prompt` (the first opens the session); `logs` moves the raw output to a new attempt's files. */
  turn(prompt: string, hardTimeoutMs: number, logs: Record<OutputStream, string> | null, attempt: number | null): TurnHandle {
    this.#record({ at: this.#received, call: 'turn', prompt, hard_timeout_ms: hardTimeoutMs, logs, ...(attempt === null ? {} : { attempt }) });
    this.#lastTurnAttempt = attempt;
    if (logs !== null) this.#proc?.redirectLogs(logs);
    const turn: ActiveTurn = { hardTimeoutMs, stopReason: null, stderrTail: [], stderr: new StderrNotes(), timer: null, remainingMs: hardTimeoutMs, armedAt: 0, graceTimer: null };
    this.#turn = turn;
    this.#arm(turn);
    const done = this.#run(turn, prompt).finally(() => {
      turn.timer?.cancel();
      turn.graceTimer?.cancel();
      this.#approvals = [];
      if (this.#turn === turn) this.#turn = null;
    });
    this.#lastTurn = { pid: this.pid, stop: (reason) => this.#stopTurn(turn, reason), done, detach: () => this.detach() };
    return this.#lastTurn;
  }

  /** Answers the permission request that `onApproval` reported; the next one is reported, or the turn's clock runs again. */
  answerApproval(decision: ApprovalDecision): void {
    const request = this.#approvals.shift();
    if (request === undefined) return;
    this.#record({ at: this.#received, call: 'answer', decision });
    this.#session.answer(request.id, decision);
    const next = this.#approvals[0];
    if (next !== undefined) this.#tell(() => this.#spec.onApproval(next));
    else if (this.#turn !== null) this.#arm(this.#turn);
  }

  /** Stops the process tree (its job is over, or was canceled, or its strict wait's deadline passed). Resolves once it is gone. */
  async stop(): Promise<void> {
    this.#closing = true;
    await this.#proc?.stop();
  }

  /** Leaves the process to its keeper (the daemon is going away). */
  async detach(): Promise<void> {
    this.#closing = true;
    this.#turn?.timer?.cancel();
    this.#turn?.graceTimer?.cancel();
    await this.#proc?.detach();
  }

  #attach(proc: EngineProcess): void {
    this.#proc = proc;
    void proc.exited.then((exit) => this.#exited(exit));
  }

  /** One act of the journal, done again on the session being replayed. */
  #replay(entry: JournalEntry): void {
    if (entry.call === 'turn') this.turn(entry.prompt, entry.hard_timeout_ms, entry.logs, entry.attempt ?? null);
    else if (entry.call === 'answer') this.answerApproval(entry.decision);
    else if (entry.call === 'interrupt' && this.#turn !== null) this.#stopTurn(this.#turn, entry.reason);
    else if (entry.call === 'timer') this.#clockEntry = entry;
  }

  /** After a replay, the turn in flight gets its clock back as the journal last left it, and an interrupt asked for its grace period. */
  #resumeClock(): void {
    const turn = this.#turn;
    const entry = this.#clockEntry;
    if (turn === null) return;
    if (turn.stopReason !== null) {
      this.#graceAfterInterrupt(turn);
      return;
    }
    if (entry === null || this.#approvals.length > 0) {
      turn.remainingMs = entry?.remaining_ms ?? turn.remainingMs;
      return;
    }
    turn.remainingMs = entry.armed_at === null ? entry.remaining_ms : entry.remaining_ms - (this.#clock.now().getTime() - Date.parse(entry.armed_at));
    this.#arm(turn);
  }

  #record(entry: JournalEntry): void {
    if (!this.#replaying) this.#journal.append(entry);
  }

  /** What the supervisor hears, never while a replay does again what was heard before. */
  #tell(hear: () => void): void {
    if (!this.#replaying) hear();
  }

  async #run(turn: ActiveTurn, prompt: string): Promise<TurnReport> {
    try {
      this.#opened ??= this.#session.open().then((id) => this.#sessionFound(id));
      await this.#opened;
      const result = turn.stopReason === null ? await this.#session.prompt(prompt, (event) => this.#event(event)) : null;
      // A stopped turn ends the job: it ends once the process tree is gone, as a one-shot turn does.
      if (turn.stopReason !== null) await this.stop();
      return this.#report(turn, result === null ? { kind: 'ok' } : outcomeOf(result), result);
    } catch (error) {
      if (!this.#gone) return this.#report(turn, refusedOutcome((error as Error).message), null);
      // The process went away: the turn ends once the whole tree is gone, and the exit says how.
      const exit = await this.exited;
      await this.#stopping;
      const seen = { sawOutput: true, stderrTail: turn.stderrTail, stderr: turn.stderr };
      const outcome = checkTurnEnd(classify(exit, turn.stopReason, { argv: this.#spec.argv, hardTimeoutMs: turn.hardTimeoutMs, resuming: false }, seen), false, false);
      return { outcome: checkProvider(outcome, null, null, turn.stderr), parsed: this.#parsed(null), exit, pid: this.pid };
    }
  }

  /** A turn that ended by the protocol (its result, null when it never got one); a stop asked for wins over what the engine said. */
  #report(turn: ActiveTurn, outcome: ProcessOutcome, result: LiveTurnResult | null): TurnReport {
    const stopped = turn.stopReason === null ? outcome : classify(ALIVE, turn.stopReason, { argv: this.#spec.argv, hardTimeoutMs: turn.hardTimeoutMs, resuming: false }, { sawOutput: true, stderrTail: [] });
    return { outcome: stopped, parsed: this.#parsed(result), exit: this.#exit ?? ALIVE, pid: this.pid };
  }

  /** What the turn said; a turn the protocol never ended said nothing (its usage unknown). */
  #parsed(result: LiveTurnResult | null): ParsedTurn {
    return { sessionId: this.#sessionId, messages: result?.messages ?? [], engineError: null, usage: result?.usage ?? null, usageSpan: 'turn' };
  }

  #sessionFound(sessionId: string | null): string | null {
    if (sessionId !== null && sessionId !== this.#sessionId) {
      this.#sessionId = sessionId;
      this.#tell(() => this.#spec.onSession(sessionId));
    }
    return sessionId;
  }

  #event(event: LiveEvent): void {
    if (event.type === 'session') this.#sessionFound(event.sessionId);
    else if (event.type === 'approval') this.#askApproval(event.request);
    else this.#tell(() => this.#spec.onMessage(event.text));
  }

  /** A person decides (approvals `ask`) while the turn's hard timeout stands still; otherwise nothing may ask, and the request is denied. */
  #askApproval(request: ApprovalRequest): void {
    const turn = this.#turn;
    if (this.#spec.start.approvals !== 'ask' || turn === null || turn.stopReason !== null) {
      this.#session.answer(request.id, 'deny');
      return;
    }
    this.#approvals.push(request);
    if (this.#approvals.length > 1) return;
    turn.timer?.cancel();
    turn.timer = null;
    turn.remainingMs -= this.#clock.now().getTime() - turn.armedAt;
    this.#record({ at: this.#received, call: 'timer', remaining_ms: turn.remainingMs, armed_at: null });
    this.#tell(() => this.#spec.onApproval(request));
  }

  /** Runs the turn's clock for what is left of it; a replay only notes it (`resumeClock` arms it once the replay is done). */
  #arm(turn: ActiveTurn): void {
    turn.armedAt = this.#clock.now().getTime();
    if (this.#replaying) return;
    this.#record({ at: this.#received, call: 'timer', remaining_ms: turn.remainingMs, armed_at: new Date(turn.armedAt).toISOString() });
    turn.timer = this.#clock.setTimer(Math.max(0, turn.remainingMs), () => this.#stopTurn(turn, 'timeout'));
  }

  #send(line: string): void {
    if (this.#gone || this.#replaying) return;
    this.#record({ at: this.#received, call: 'send' });
    if (this.#proc?.write(`${line}\n`) === true) return;
    this.#gone = true;
    this.#session.dispose(new LiveSessionClosed('the engine process no longer reads its input'));
  }

  #line(stream: OutputStream, line: SpoolLine): void {
    if (stream === 'stdout') {
      this.#stdout(line, true);
      return;
    }
    const text = 'text' in line ? line.text : overflowText(line.overflow);
    this.#spec.onOutput(stream, text);
    if ('text' in line && this.#turn !== null) {
      keepTail(this.#turn.stderrTail, text);
      this.#turn.stderr.line(text);
    }
  }

  /** A line of stdout: told as an `output` event unless it was before, and read by the protocol. */
  #stdout(line: SpoolLine, tell: boolean): void {
    this.#received += 1;
    if (tell) this.#spec.onOutput('stdout', 'text' in line ? line.text : overflowText(line.overflow));
    if ('text' in line) this.#session.receive(line.text);
  }

  /** Asks the engine to interrupt the turn; the process tree is stopped if the turn has not ended within the grace period. */
  #stopTurn(turn: ActiveTurn, reason: StopReason): void {
    if (this.#turn !== turn || turn.stopReason !== null) return;
    this.#record({ at: this.#received, call: 'interrupt', reason });
    turn.stopReason = reason;
    this.#session.interrupt();
    if (!this.#replaying) this.#graceAfterInterrupt(turn);
  }

  #graceAfterInterrupt(turn: ActiveTurn): void {
    turn.graceTimer = this.#clock.setTimer(this.#spec.graceMs, () => {
      if (this.#turn === turn) this.#stopping = this.#proc?.stop() ?? Promise.resolve();
    });
  }

  #exited(exit: ExitInfo): void {
    this.#exit = exit;
    this.#gone = true;
    const how = exit.spawnError !== null ? `could not start: ${exit.spawnError}` : exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
    this.#session.dispose(new LiveSessionClosed(`the engine process ${how}`));
    if (this.#turn === null && !this.#closing) this.#spec.onLost(exit);
  }
}
