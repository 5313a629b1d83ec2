import type { JobErrorCode, WarningCode } from '../../rpc/errors.js';
import { readAskUser, withoutAskUserBlock, type AskUserSignal } from '../engines/ask-user.js';
import { hasDoneMarker, stripDoneMarker } from '../engines/done-marker.js';
import type { SchemaIssue, Validator } from '../skills/json-schema.js';
import type { GateDecision, Pending, ProcessOutcome } from '../model/gate.js';
import type { ExecutionMode } from '../model/job.js';
import { extractOutput } from './output.js';

export const FALLBACK_PROMPT = 'Please provide your next input.';

export interface TurnEvidence {
  mode: ExecutionMode;
  process: ProcessOutcome;
  messages: readonly string[];
  validateOutput: Validator;
  attempt: number;
  maxAttempt: number | null;
  /** The turn's session id; a turn that would wait without one cannot be resumed (PR-15..PR-17). */
  sessionId: string | null;
  /** Whether waiting needs a session id (resumable profile). */
  waitNeedsSession: boolean;
}

type OutputCheck = { ok: true; output: Record<string, unknown>; repaired: boolean } | { ok: false; reason: string };

/** The turn gate: one pure decision per turn, for both modes (README, "Interactive runs in detail"). */
export function decideTurn(evidence: TurnEvidence): GateDecision {
  const { process } = evidence;
  if (process.kind === 'canceled') return { status: 'canceled', error: { code: 'CANCELED_BY_USER', message: 'canceled by user' }, warnings: [] };
  if (process.kind === 'failed') return { status: 'failed', error: { code: process.code, message: process.message, ...(process.details === undefined ? {} : { details: process.details }) }, warnings: [] };
  const final = evidence.messages[evidence.messages.length - 1] ?? '';
  const check = checkOutput(final, evidence.validateOutput);
  const repaired: WarningCode[] = check.ok && check.repaired ? ['OUTPUT_REPAIRED'] : [];
  if (evidence.mode === 'auto') {
    return check.ok ? { status: 'succeeded', output: check.output, warnings: repaired } : failed('OUTPUT_INVALID', check.reason, []);
  }
  return decideInteractive(evidence, final, check, repaired);
}

function decideInteractive(evidence: TurnEvidence, final: string, check: OutputCheck, repaired: WarningCode[]): GateDecision {
  const signal = strongestSignal(evidence.messages);
  const malformed: WarningCode[] = signal.kind === 'malformed' ? ['ASK_USER_MALFORMED'] : [];
  if (hasDoneMarker(evidence.messages)) {
    if (check.ok) return { status: 'succeeded', output: check.output, warnings: [...malformed, ...repaired] };
    return failed('OUTPUT_INVALID', `done marker present but ${check.reason}`, malformed);
  }
  if (signal.kind === 'none' && check.ok) {
    return { status: 'succeeded', output: check.output, warnings: ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER', ...repaired] };
  }
  if (evidence.maxAttempt !== null && evidence.attempt >= evidence.maxAttempt) {
    return failed('INTERACTIVE_MAX_ATTEMPT_EXCEEDED', `no result after ${evidence.attempt} of max_attempt ${evidence.maxAttempt} turns`, malformed);
  }
  if (evidence.waitNeedsSession && evidence.sessionId === null) {
    return failed('SESSION_RESUME_FAILED', 'the turn asked for input but its output carried no valid session id to resume', malformed);
  }
  const pending = buildPending(evidence.attempt, final, signal);
  // TP-3: waiting needs an interaction a client can answer; anything less is a turn error.
  if (!isUsableInteraction(pending)) return failed('OUTPUT_INVALID', 'the turn asked for input but no usable interaction (interaction_id, prompt) could be built', malformed);
  return { status: 'waiting_user', pending, warnings: malformed };
}

/** An interaction clients can answer: a positive integer id and a non-empty prompt (TP-3). */
export function isUsableInteraction(value: unknown): value is Pending {
  const p = value as Partial<Pending> | null;
  return typeof p === 'object' && p !== null && Number.isInteger(p.interaction_id) && (p.interaction_id as number) >= 1 && typeof p.prompt === 'string' && p.prompt.trim() !== '';
}

/** D-5: the daemon's own pending, enriched by a well-formed hint when there is one. */
export function buildPending(attempt: number, final: string, signal: AskUserSignal): Pending {
  if (signal.kind === 'hint') {
    const { hint } = signal;
    const pending: Pending = { interaction_id: attempt, prompt: hint.prompt, kind: hint.kind ?? 'open_text' };
    if (hint.options !== null) pending.options = hint.options;
    if (hint.ui_hints !== null) pending.ui_hints = hint.ui_hints;
    return pending;
  }
  const text = withoutAskUserBlock(final);
  return { interaction_id: attempt, prompt: text === '' ? FALLBACK_PROMPT : text, kind: 'open_text' };
}

/** A hint beats a malformed signal, which beats none, across the turn's messages. */
function strongestSignal(messages: readonly string[]): AskUserSignal {
  let found: AskUserSignal = { kind: 'none' };
  for (const message of messages) {
    const signal = readAskUser(message);
    if (signal.kind === 'hint') found = signal;
    else if (signal.kind === 'malformed' && found.kind === 'none') found = signal;
  }
  return found;
}

function checkOutput(final: string, validate: Validator): OutputCheck {
  const candidate = extractOutput(final);
  if (candidate === null) return { ok: false, reason: 'the final message holds no JSON object' };
  const output = stripDoneMarker(candidate.value);
  const issues = validate(output);
  if (issues.length > 0) return { ok: false, reason: `output does not match the schema: ${describe(issues)}` };
  return { ok: true, output, repaired: candidate.repaired };
}

function describe(issues: SchemaIssue[]): string {
  return issues.slice(0, 5).map((i) => `${i.path} ${i.message}`).join('; ');
}

function failed(code: JobErrorCode, message: string, warnings: WarningCode[]): GateDecision {
  return { status: 'failed', error: { code, message }, warnings };
}
