import { quoteText } from '../engines/error-lines.js';
import type { LiveTurnResult } from '../engines/live-session.js';
import { explainByProvider, reportSign } from '../engines/provider-errors.js';
import type { ProcessOutcome } from '../model/gate.js';

/**
 * What the protocol's end of turn means for the job, before any stop asked for. A failure quotes
 * the engine's first meaningful line of it (error-lines.ts), or is the provider's where the engine
 * says so (provider-errors.ts).
 */
export function outcomeOf(result: LiveTurnResult): ProcessOutcome {
  if (result.outcome === 'completed') return { kind: 'ok' };
  if (result.outcome === 'interrupted') return { kind: 'failed', code: 'ENGINE_TURN_INTERRUPTED', message: 'the engine ended its turn as interrupted, though nothing asked it to' };
  const quote = quoteText(result.error);
  const failed: ProcessOutcome = { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: `the engine reported that its turn failed: ${quote ?? 'no reason given'}` };
  return explainByProvider(failed, reportSign(result.error, result.errorFields ?? null), quote);
}

/** A turn the engine refused outright (an error answer to the prompt's request): its words say whether the provider refused it. */
export function refusedOutcome(said: string): ProcessOutcome {
  const quote = quoteText(said);
  return explainByProvider({ kind: 'failed', code: 'ENGINE_TURN_FAILED', message: `the engine refused the turn: ${quote ?? said}` }, reportSign(said, null), quote);
}
