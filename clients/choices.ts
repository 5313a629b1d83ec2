/**
 * The values skillctl's options allow, as the daemon defines them (daemon/model/states.ts and
 * job.ts; a unit test keeps these in step). Checked before anything is sent: a bad value is a
 * usage error that lists them.
 */

export const JOB_STATUSES = ['queued', 'running', 'waiting_user', 'succeeded', 'failed', 'canceled'] as const;
export const EXECUTION_MODES = ['auto', 'interactive'] as const;
export const ENGINE_NAMES = ['codex', 'gemini', 'iflow', 'claude'] as const;
export const LOG_STREAMS = ['stdout', 'stderr'] as const;
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
