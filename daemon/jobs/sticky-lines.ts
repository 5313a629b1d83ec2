import type { Clock, Timer } from '../clock.js';
import type { TurnParser } from '../engines/engine.js';
import type { EngineProcess, ExitInfo, OutputStream, Spawner } from '../process/spawn.js';
import { checkTurnEnd, classify, keepTail, type LaunchSpec, type StopReason, type TurnHandle, type TurnReport } from './turn.js';

export interface StickyLinesSpec extends LaunchSpec {
  /** The process went away while no turn was running (the job was waiting). */
  onLost(exit: ExitInfo): void;
}

interface ActiveTurn {
  parser: TurnParser;
  hardTimeoutMs: number;
  stopReason: StopReason | null;
  sawOutput: boolean;
  stderrTail: string[];
  timer: Timer;
  resolve(report: TurnReport): void;
}

/**
 * A sticky process for an engine without a live protocol (see live-session.ts): stdin stays
 * open, a turn ends at the one-shot output's turn-end signal, and a reply is written to stdin as
 * one line. Only the fake engines serve turns this way.
 */
export class StickyLinesSession {
  readonly #clock: Clock;
  readonly #spec: StickyLinesSpec;
  readonly #proc: EngineProcess;
  #turn: ActiveTurn | null = null;
  #exit: ExitInfo | null = null;
  #closing = false;
  #stopping: Promise<unknown> = Promise.resolve();

  constructor(spawner: Spawner, clock: Clock, spec: StickyLinesSpec) {
    this.#clock = clock;
    this.#spec = spec;
    this.#proc = spawner.spawn({
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      mark: spec.mark,
      stdin: 'pipe',
      logs: spec.logs,
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

  /** Starts reading the next turn; `input` (a reply) is written to stdin first. */
  turn(parser: TurnParser, hardTimeoutMs: number, input: string | null, logs: Record<OutputStream, string> | null): TurnHandle {
    if (logs !== null) this.#proc.redirectLogs(logs);
    const done = new Promise<TurnReport>((resolve) => {
      const timer = this.#clock.setTimer(hardTimeoutMs, () => this.#stopTurn('timeout'));
      this.#turn = { parser, hardTimeoutMs, stopReason: null, sawOutput: false, stderrTail: [], timer, resolve };
    });
    if (this.#exit !== null) this.#endTurn(this.#exit);
    else if (input !== null && !this.#proc.write(input)) this.#endTurn({ code: null, signal: null, spawnError: null });
    return { pid: this.#proc.pid, stop: (reason) => this.#stopTurn(reason), done };
  }

  /** Ends the process: stdin closed, then the stop sequence if it lingers. Resolves once it is gone. */
  async finish(graceMs: number): Promise<void> {
    this.#closing = true;
    this.#proc.endInput();
    if (this.#exit !== null) return;
    const timer = this.#clock.setTimer(graceMs, () => void this.#proc.stop());
    await this.#proc.exited;
    timer.cancel();
  }

  /** Stops the process group now (cancel, wait timeout). */
  async stop(): Promise<void> {
    this.#closing = true;
    await this.#proc.stop();
  }

  #line(stream: OutputStream, text: string): void {
    this.#spec.onOutput(stream, text);
    const turn = this.#turn;
    if (turn === null) return;
    if (stream === 'stdout' && text.trim() !== '') turn.sawOutput = true;
    if (stream === 'stderr') keepTail(turn.stderrTail, text);
    turn.parser.line(stream, text);
    if (turn.parser.turnEnded) this.#endTurn(null);
  }

  #stopTurn(reason: StopReason): void {
    const turn = this.#turn;
    if (turn === null || turn.stopReason !== null) return;
    turn.stopReason = reason;
    this.#stopping = this.#proc.stop();
  }

  #exited(exit: ExitInfo): void {
    this.#exit = exit;
    // A stopped turn ends once the whole process tree is gone, not only its leader.
    if (this.#turn !== null) void this.#stopping.then(() => this.#endTurn(exit));
    else if (!this.#closing) this.#spec.onLost(exit);
  }

  /** Ends the running turn: at its turn-end signal (exit null: the process lives on) or at the exit. */
  #endTurn(exit: ExitInfo | null): void {
    const turn = this.#turn;
    if (turn === null) return;
    this.#turn = null;
    turn.timer.cancel();
    const seen = { sawOutput: turn.sawOutput, stderrTail: turn.stderrTail };
    const outcome =
      exit === null && turn.stopReason === null
        ? { kind: 'ok' as const }
        : checkTurnEnd(classify(exit ?? { code: null, signal: null, spawnError: null }, turn.stopReason, { argv: this.#spec.argv, hardTimeoutMs: turn.hardTimeoutMs, resuming: false }, seen), turn.parser.turnEnded, false);
    turn.resolve({ outcome, parsed: turn.parser.result(), exit: exit ?? { code: null, signal: null, spawnError: null }, pid: this.#proc.pid });
  }
}
