import type { JobGateway } from '../network/job-gateway.js';
import type { TurnHandle } from './turn.js';

/**
 * The turn, its usage counted and its provider watched (docs/network.md, "The model gateway"):
 * where a gateway runs, what it counted of the turn's calls is the turn's usage, and a provider's
 * refusal of the key or a rate limit past the gateway's retries stops the turn at once and is why
 * it failed; elsewhere the usage is what the engine reported of its turn (of its session, for
 * Codex one-shot: model/usage.ts `usageAfterTurn`).
 */
export function accountTurn(turn: TurnHandle, gateway: Pick<JobGateway, 'onFailure' | 'take'> | null): TurnHandle {
  if (gateway === null) return { ...turn, done: turn.done.then((report) => ({ ...report, usage: report.parsed.usage === null ? null : { used: report.parsed.usage, span: report.parsed.usageSpan } })) };
  const stopListening = gateway.onFailure(() => turn.stop('canceled'));
  const done = turn.done.then(async (report) => {
    stopListening();
    const taken = await gateway.take();
    const usage = taken.usage === null ? null : { used: taken.usage, span: 'turn' as const };
    if (taken.failure === null) return { ...report, usage };
    return { ...report, usage, outcome: { kind: 'failed' as const, code: taken.failure.code, message: taken.failure.message } };
  });
  return { ...turn, done };
}
