/**
 * skillctl's exit codes (README, "exit codes"): what a script may branch on. `pending` is a job
 * that has not finished yet (`result` of a queued, running or waiting job).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, pending: 4, interrupted: 130 } as const;
