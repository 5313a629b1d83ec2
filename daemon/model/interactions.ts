import { isDeepStrictEqual } from 'node:util';
import { SkilldError } from '../../rpc/errors.js';
import type { Pending } from './gate.js';

export type ResolutionMode = 'user_reply' | 'auto_decide_timeout';

/** One ask/reply round (LC-7), as `jobs/history` returns it. */
export interface Interaction {
  interaction_id: number;
  prompt: string;
  kind: string;
  response: unknown;
  resolution_mode: ResolutionMode | null;
  asked_at: string;
  replied_at: string | null;
  idempotency_key: string | null;
}

export const AUTO_DECIDE_INSTRUCTION = 'The user did not reply in time. Continue with your best judgement based on the current context.';

/** The reply sent for a non-strict job whose deadline passed. */
export function autoDecideResponse(interactionId: number): { source: 'auto_decide_timeout'; interaction_id: number; instruction: string } {
  return { source: 'auto_decide_timeout', interaction_id: interactionId, instruction: AUTO_DECIDE_INSTRUCTION };
}

/** The id of the next round: monotonic per job, and at least `floor` (a question's is its attempt). */
export function nextInteractionId(history: readonly Interaction[], floor: number): number {
  return Math.max(floor, ...history.map((i) => i.interaction_id + 1));
}

/**
 * The round a question asked now is: the last one, when that is this same question still
 * unanswered (the same turn's outcome stored again: a write retried after a storage fault, or a
 * turn settled again after a crash), so that one question never becomes two rounds and a reply
 * to the first is not stale; else a new round, with the next id. Null: the last round is it.
 */
export function askedRound(history: readonly Interaction[], asked: Pending): number | null {
  const last = history.at(-1);
  if (last !== undefined && last.replied_at === null && last.interaction_id >= asked.interaction_id && last.prompt === asked.prompt && last.kind === asked.kind) return null;
  return nextInteractionId(history, asked.interaction_id);
}

/** The history after a new question was asked. */
export function withAsked(history: readonly Interaction[], pending: Pending, askedAt: string): Interaction[] {
  const entry: Interaction = {
    interaction_id: pending.interaction_id,
    prompt: pending.prompt,
    kind: pending.kind,
    response: null,
    resolution_mode: null,
    asked_at: askedAt,
    replied_at: null,
    idempotency_key: null,
  };
  return [...history.filter((i) => i.interaction_id !== pending.interaction_id), entry];
}

/** The history with the pending round answered. */
export function withReply(history: readonly Interaction[], interactionId: number, reply: { response: unknown; mode: ResolutionMode; at: string; key: string | null }): Interaction[] {
  return history.map((i) =>
    i.interaction_id === interactionId ? { ...i, response: reply.response, resolution_mode: reply.mode, replied_at: reply.at, idempotency_key: reply.key } : i,
  );
}

/**
 * An earlier reply with the same idempotency key: the same response is a harmless retry (true);
 * another response is IDEMPOTENCY_CONFLICT. No earlier use: false.
 */
export function isRepeatedReply(history: readonly Interaction[], key: string | undefined, response: unknown): boolean {
  if (key === undefined) return false;
  const earlier = history.find((i) => i.idempotency_key === key);
  if (earlier === undefined) return false;
  if (isDeepStrictEqual(earlier.response, response)) return true;
  throw new SkilldError('IDEMPOTENCY_CONFLICT', `idempotency_key "${key}" was already used with another response (interaction ${earlier.interaction_id})`);
}

/** The answered response that the next resume turn sends, if the last round has one. */
export function lastResponse(history: readonly Interaction[]): { response: unknown } | null {
  const last = history[history.length - 1];
  return last === undefined || last.replied_at === null ? null : { response: last.response };
}

/** The kind of the job's pending round, if it has one. */
export function pendingKind(history: readonly Interaction[], job: { pending_interaction_id: number | null }): string | null {
  return history.find((i) => i.interaction_id === job.pending_interaction_id)?.kind ?? null;
}
