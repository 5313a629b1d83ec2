import { join } from 'node:path';
import type { Clock, Timer } from '../clock.js';
import type { ParsedTurn } from '../engines/engine.js';
import { LiveSessionClosed, type ApprovalDecision, type ApprovalRequest, type LiveEvent, type LiveProtocol, type LiveSession, type LiveStart, type LiveTurnResult } from '../engines/live-session.js';
import type { EngineProcess, ExitInfo, OutputStream, Spawner } from '../process/spawn.js';
import type { ProcessOutcome } from './gate.js';
import { checkTurnEnd, classify, keepTail, type LaunchSpec, type StopReason, type TurnHandle, type TurnReport } from './turn.js';

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
  /** The hard timeout; paused (null) while a person decides an approval. */
  timer: Timer | null;
  /** What is left of the hard timeout, as of `armedAt`. */
  remainingMs: number;
  armedAt: number;
  /** The stop sequence, armed when an interrupt is asked for. */
  graceTimer: Timer | null;
}

const ALIVE: ExitInfo = { code: null, signal: null, spawnError: null };

/**
 * One live engine process that serves every turn of a sticky job over the engine's own protocol
 * (`LiveProtocol`): the first turn opens the session, each reply is the next prompt, and a turn
 * ends at the protocol's end of turn, never at an exit. Cancel and timeouts ask the engine to
 * interrupt first and stop the process tree when it does not within `graceMs`.
 */
export class StickySession {
  readonly #clock: Clock;
  readonly #spec: StickySpec;
  readonly #proc: EngineProcess;
  readonly #session: LiveSession;
  /** The opening, once started: its session id (or null when the engine names none there). */
  #opened: Promise<string | null> | null = null;
  #sessionId: string | null = null;
  #turn: ActiveTurn | null = null;
  /** Permission requests of the turn waiting for a person, the one asked first. */
  #approvals: ApprovalRequest[] = [];
  #exit: ExitInfo | null = null;
  /** Set once the process can take no more messages (it exited, or its stdin closed). */
  #gone = false;
  #closing = false;
  #stopping: Promise<unknown> = Promise.resolve();

  constructor(spawner: Spawner, clock: Clock, spec: StickySpec) {
    this.#clock = clock;
    this.#spec = spec;
    this.#session = spec.protocol.connect({ send: (line) => this.#send(line) }, spec.start);
    this.#proc = spawner.spawn({
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      mark: spec.mark,
      sandbox: spec.sandbox,
      stdin: 'live',
      // The process outlives attempts: its output goes to files of its own, and is copied to each attempt's logs.
      keeper: { dir: spec.keeperDir, stdout: join(spec.keeperDir, 'live.stdout'), stderr: join(spec.keeperDir, 'live.stderr'), note: null },
      copyTo: spec.logs,
      onLine: (stream, text) => this.#line(stream, text),
      onOverflow: (stream, bytes) => spec.onOutput(stream, `[skilld: a line of more than ${bytes} bytes was dropped]`),
    });
    void this.#proc.exited.then((exit) => this.#exited(exit));
  }

  get pid(): number | null {
    return this.#proc.pid;
  }

  /** Resolves when the process has exited. */
  get exited(): Promise<ExitInfo> {
    return this.#proc.exited;
  }

  get alive(): boolean {
    return this.#exit === null;
  }

  /** Runs one turn on `prompt` (the first opens the session); `logs` moves the raw output to a new attempt's files. */
  turn(prompt: string, hardTimeoutMs: number, logs: Record<OutputStream, string> | null): TurnHandle {
    if (logs !== null) this.#proc.redirectLogs(logs);
    const turn: ActiveTurn = { hardTimeoutMs, stopReason: null, stderrTail: [], timer: null, remainingMs: hardTimeoutMs, armedAt: 0, graceTimer: null };
    this.#turn = turn;
    this.#arm(turn);
    const done = this.#run(turn, prompt).finally(() => {
      turn.timer?.cancel();
      turn.graceTimer?.cancel();
      this.#approvals = [];
      if (this.#turn === turn) this.#turn = null;
    });
    return { pid: this.#proc.pid, stop: (reason) => this.#stopTurn(turn, reason), done, detach: () => this.detach() };
  }

  /** Answers the permission request that `onApproval` reported; the next one is reported, or the turn's clock runs again. */
  answerApproval(decision: ApprovalDecision): void {
    const request = this.#approvals.shift();
    if (request === undefined) return;
    this.#session.answer(request.id, decision);
    const next = this.#approvals[0];
    if (next !== undefined) this.#spec.onApproval(next);
    else if (this.#turn !== null) this.#arm(this.#turn);
  }

  /** Stops the process tree (its job is over, or was canceled, or its strict wait's deadline passed). Resolves once it is gone. */
  async stop(): Promise<void> {
    this.#closing = true;
    await this.#proc.stop();
  }

  /** Leaves the process to its keeper (the daemon is going away). */
  async detach(): Promise<void> {
    this.#closing = true;
    this.#turn?.timer?.cancel();
    this.#turn?.graceTimer?.cancel();
    await this.#proc.detach();
  }

  async #run(turn: ActiveTurn, prompt: string): Promise<TurnReport> {
    try {
      this.#opened ??= this.#session.open().then((id) => this.#sessionFound(id));
      await this.#opened;
      const result = turn.stopReason === null ? await this.#session.prompt(prompt, (event) => this.#event(event)) : null;
      // A stopped turn ends the job: it ends once the process tree is gone, as a one-shot turn does.
      if (turn.stopReason !== null) await this.stop();
      return this.#report(turn, result === null ? { kind: 'ok' } : outcomeOf(result), result?.messages ?? []);
    } catch (error) {
      if (!this.#gone) return this.#report(turn, { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: `the engine refused the turn: ${(error as Error).message}` }, []);
      // The process went away: the turn ends once the whole tree is gone, and the exit says how.
      const exit = await this.#proc.exited;
      await this.#stopping;
      const seen = { sawOutput: true, stderrTail: turn.stderrTail };
      const outcome = checkTurnEnd(classify(exit, turn.stopReason, { argv: this.#spec.argv, hardTimeoutMs: turn.hardTimeoutMs, resuming: false }, seen), false, false);
      return { outcome, parsed: this.#parsed([]), exit, pid: this.#proc.pid };
    }
  }

  /** A turn that ended by the protocol; a stop asked for wins over what the engine said. */
  #report(turn: ActiveTurn, outcome: ProcessOutcome, messages: string[]): TurnReport {
    const stopped = turn.stopReason === null ? outcome : classify(ALIVE, turn.stopReason, { argv: this.#spec.argv, hardTimeoutMs: turn.hardTimeoutMs, resuming: false }, { sawOutput: true, stderrTail: [] });
    return { outcome: stopped, parsed: this.#parsed(messages), exit: this.#exit ?? ALIVE, pid: this.#proc.pid };
  }

  #parsed(messages: string[]): ParsedTurn {
    return { sessionId: this.#sessionId, messages, engineError: null };
  }

  #sessionFound(sessionId: string | null): string | null {
    if (sessionId !== null && sessionId !== this.#sessionId) {
      this.#sessionId = sessionId;
      this.#spec.onSession(sessionId);
    }
    return sessionId;
  }

  #event(event: LiveEvent): void {
    if (event.type === 'session') this.#sessionFound(event.sessionId);
    else if (event.type === 'approval') this.#askApproval(event.request);
    else this.#spec.onMessage(event.text);
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
    this.#spec.onApproval(request);
  }

  #arm(turn: ActiveTurn): void {
    turn.armedAt = this.#clock.now().getTime();
    turn.timer = this.#clock.setTimer(Math.max(0, turn.remainingMs), () => this.#stopTurn(turn, 'timeout'));
  }

  #send(line: string): void {
    if (this.#gone) return;
    if (this.#proc.write(`${line}\n`)) return;
    this.#gone = true;
    this.#session.dispose(new LiveSessionClosed('the engine process no longer reads its input'));
  }

  #line(stream: OutputStream, text: string): void {
    this.#spec.onOutput(stream, text);
    if (stream === 'stdout') this.#session.receive(text);
    else if (this.#turn !== null) keepTail(this.#turn.stderrTail, text);
  }

  /** Asks the engine to interrupt the turn; the process tree is stopped if the turn has not ended within the grace period. */
  #stopTurn(turn: ActiveTurn, reason: StopReason): void {
    if (this.#turn !== turn || turn.stopReason !== null) return;
    turn.stopReason = reason;
    this.#session.interrupt();
    turn.graceTimer = this.#clock.setTimer(this.#spec.graceMs, () => {
      if (this.#turn === turn) this.#stopping = this.#proc.stop();
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

/** What the protocol's end of turn means for the job, before any stop asked for. */
function outcomeOf(result: LiveTurnResult): ProcessOutcome {
  if (result.outcome === 'completed') return { kind: 'ok' };
  if (result.outcome === 'interrupted') return { kind: 'failed', code: 'ENGINE_TURN_INTERRUPTED', message: 'the engine ended its turn as interrupted, though nothing asked it to' };
  return { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: `the engine reported that its turn failed: ${result.error ?? 'no reason given'}` };
}
