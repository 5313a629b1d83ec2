import type { Clock } from '../base/clock.js';
import type { TurnHandle } from './turn.js';

/** How often the workspace of a job whose turn runs is measured (and once more at the turn's end). */
export const WORKSPACE_CHECK_MS = 60_000;

/** A job's workspace limit, and how its size is measured (the disk is the sandbox's: sandbox/disk-usage.ts). */
export interface WorkspaceCheck {
  limit: number | null;
  measure(): Promise<number>;
}

/**
 * The turn, its job's workspace kept under `limits.workspace` (docs/sandbox.md, "Limits"): measured
 * every WORKSPACE_CHECK_MS while the turn runs and at its end; over it, the turn is stopped (or,
 * ended, taken as failed) with WORKSPACE_TOO_LARGE, the limit and the size measured in its details.
 */
export function guardWorkspace(turn: TurnHandle, clock: Clock, check: WorkspaceCheck): TurnHandle {
  const { limit } = check;
  if (limit === null) return turn;
  let over: number | null = null;
  let timer = { cancel: (): void => undefined };
  const measure = (): Promise<number> => check.measure().catch(() => 0);
  const later = (): void => {
    timer = clock.setTimer(WORKSPACE_CHECK_MS, () => {
      void measure().then((size) => {
        if (size <= limit) return later();
        over = size;
        turn.stop('canceled');
      });
    });
  };
  later();
  const done = turn.done.then(async (report) => {
    timer.cancel();
    const size = over ?? (await measure());
    if (size <= limit) return report;
    const message = `the job's workspace takes ${size} bytes, over its limit of ${limit} (limits.workspace)${over === null ? '' : ': the turn was stopped'}`;
    return { ...report, outcome: { kind: 'failed' as const, code: 'WORKSPACE_TOO_LARGE' as const, message, details: { limit: 'workspace', value: limit, used: size } } };
  });
  return {
    ...turn,
    done,
    detach: () => {
      timer.cancel();
      return turn.detach();
    },
  };
}
