import type { JobErrorCode, WarningCode } from '../../rpc/errors.js';
import type { JobError } from './job.js';

/**
 * What the turn gate (jobs/gate.ts) decides with and about: how a turn's process ended, the
 * question a turn leaves for the user, and the decision itself. Types only.
 */

/** How the turn's process ended, decided before any output is looked at. */
export type ProcessOutcome = { kind: 'ok' } | { kind: 'canceled' } | { kind: 'failed'; code: JobErrorCode; message: string; details?: JobError['details'] };

/** The question a job waits on: its round's id and prompt, with what a client needs to show it. */
export interface Pending {
  interaction_id: number;
  prompt: string;
  kind: string;
  options?: Array<{ label: string; value: unknown }>;
  ui_hints?: Record<string, unknown>;
  /** What the question is about, as the engine said it (an approval's request). */
  context?: Record<string, unknown>;
}

/** What the gate made of a turn: the job's next status and what goes with it. */
export type GateDecision =
  | { status: 'succeeded'; output: Record<string, unknown>; warnings: WarningCode[] }
  | { status: 'failed'; error: JobError; warnings: WarningCode[] }
  | { status: 'canceled'; error: JobError; warnings: WarningCode[] }
  | { status: 'waiting_user'; pending: Pending; warnings: WarningCode[] };
