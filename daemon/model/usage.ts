/**
 * What a job's model calls used (docs/protocol.md, "Job"): tokens in and out, and the calls.
 * `input_tokens` counts every token of input, those read from the provider's cache included
 * (OpenAI's sense); `cached_input_tokens` is that cached part. Counted by the model gateway from
 * the provider's own responses where one runs, else from what the engine reports of its turn.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  /** Model calls: each request the gateway passed on, or each turn's calls as the engine counts them (one where it does not say). */
  requests: number;
}

export const NO_USAGE: Readonly<Usage> = Object.freeze({ input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, requests: 0 });

/** The sum of two counts; a missing one counts nothing. */
export function addUsage(a: Readonly<Usage> | null | undefined, b: Readonly<Usage> | null | undefined): Usage {
  const x = a ?? NO_USAGE;
  const y = b ?? NO_USAGE;
  return {
    input_tokens: x.input_tokens + y.input_tokens,
    output_tokens: x.output_tokens + y.output_tokens,
    cached_input_tokens: x.cached_input_tokens + y.cached_input_tokens,
    requests: x.requests + y.requests,
  };
}

/**
 * A job's usage after a turn that reported `reported`. Most reports cover the turn alone
 * (`span` `turn`) and are added; Codex's one-shot report covers its whole session so far, the
 * job's own (`session`): its tokens are the job's from then on (never fewer than before, should
 * a session have been started again), and its calls, which are the turn's, are added.
 */
export function usageAfterTurn(stored: Readonly<Usage> | null | undefined, reported: Readonly<Usage>, span: 'turn' | 'session'): Usage {
  if (span === 'turn') return addUsage(stored, reported);
  const before = stored ?? NO_USAGE;
  return {
    input_tokens: Math.max(before.input_tokens, reported.input_tokens),
    output_tokens: Math.max(before.output_tokens, reported.output_tokens),
    cached_input_tokens: Math.max(before.cached_input_tokens, reported.cached_input_tokens),
    requests: before.requests + reported.requests,
  };
}

/** A count a provider or an engine gave: a finite number not below zero, else 0 (a missing or odd field counts nothing). */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
