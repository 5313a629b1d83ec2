import type { ApprovalMode, EngineName } from '../model/job.js';
import type { Usage } from '../model/usage.js';
import type { ErrorFields } from './provider-errors.js';

/**
 * Live sessions: one engine process that keeps its conversation in memory across turns, driven
 * over the engine's own long-lived protocol (Codex `app-server`, ACP for Gemini and iFlow, Claude
 * Code stream-json). Each protocol is a thin mapping from its messages to these types; the process
 * itself (spawn, logs, stop, timeouts) belongs to `StickySession`, and every decision about the
 * job to the supervisor.
 */

export type ApprovalDecision = 'allow' | 'deny';

/** A permission the engine asks for in the middle of a turn. */
export interface ApprovalRequest {
  /** Unique within the session; `answer` takes it back. */
  id: string;
  /** What the agent wants to do: run a command, change files, or use another tool. */
  kind: 'command' | 'file_change' | 'tool';
  /** One line a person can judge: the command line, the files, the tool and its input. */
  summary: string;
  /** The engine's own description of the request, as it sent it. */
  detail: unknown;
}

/** What a live turn reports while it runs. */
export type LiveEvent =
  /** The engine's session id, as soon as the engine reports it (stored as the job's handle). */
  | { type: 'session'; sessionId: string }
  /** An assistant message completed. */
  | { type: 'message'; text: string }
  /** The turn waits for `answer(request.id, …)`. */
  | { type: 'approval'; request: ApprovalRequest };

/** How a live turn ended, by the protocol's own signal. */
export interface LiveTurnResult {
  outcome: 'completed' | 'interrupted' | 'failed';
  /** The turn's assistant messages in order; the last is the final one. */
  messages: string[];
  /** What the engine said went wrong, for `failed`. */
  error: string | null;
  /** What this turn's model calls used, as the protocol reported it at the turn's end; null when it reported nothing. */
  usage: Usage | null;
  /** What the engine gave in fields of its own with `error` (the provider's status, an error type), where it did. */
  errorFields?: ErrorFields;
}

/** The process's stdin, as the protocol sees it: one message per line. */
export interface LiveIo {
  send(line: string): void;
}

/**
 * One engine's protocol on one live process. The process's stdout lines go to `receive`; the
 * session writes through its `LiveIo`. Calls are made one at a time: `open` once, then a
 * `prompt` per turn. When the process goes away, `dispose` rejects whatever is pending at once.
 */
export interface LiveSession {
  /** Every line the engine printed on stdout, in order. */
  receive(line: string): void;
  /** The protocol's opening (initialize, new thread or session); resolves with the session id when the engine reports it there, else null. */
  open(): Promise<string | null>;
  /** Runs one turn on `text`; resolves at the protocol's end of turn, never at a process exit. */
  prompt(text: string, onEvent: (event: LiveEvent) => void): Promise<LiveTurnResult>;
  /** Asks the engine to interrupt the turn in flight, the protocol's way; the turn then resolves `interrupted`. No-op between turns. */
  interrupt(): void;
  /** Answers a pending approval of the turn in flight. */
  answer(approvalId: string, decision: ApprovalDecision): void;
  /** The process is gone (or being stopped): pending calls reject with `error`, later ones too. */
  dispose(error: Error): void;
}

/** What starting a live session takes, beyond the engine's command. */
export interface LiveStart {
  engine: EngineName;
  model: string | null;
  cwd: string;
  approvals: ApprovalMode;
  /** A fresh UUID, for engines that take their session id from the caller (Claude `--session-id`). */
  newSessionId: string;
}

/** One engine's long-lived protocol: how to start a process that speaks it, and how to speak it. */
export interface LiveProtocol {
  /** The argv after the engine's `command` that starts a live process. */
  argv(start: LiveStart): string[];
  /** Environment the live process needs, merged over the engine's own (`EngineAdapter.env`). */
  readonly env: Readonly<Record<string, string>>;
  connect(io: LiveIo, start: LiveStart): LiveSession;
  /** Loads the protocol's code where it is loaded when first used; a session taken up after a restart is made only once it has (deferred-session.ts). */
  load?(): Promise<void>;
}

/** The error a disposed session's calls reject with. */
export class LiveSessionClosed extends Error {
  override readonly name = 'LiveSessionClosed';
}
