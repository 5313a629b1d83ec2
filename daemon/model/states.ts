/**
 * The job lifecycle as one table: statuses, the events that move a job, and where each event
 * leads from each status. Pure data; `JobMoves.apply` (jobs/moves.ts) is the only code that
 * moves a job.
 */

export const JOB_STATUSES = ['queued', 'running', 'waiting_user', 'succeeded', 'failed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled']);

/**
 * start: a slot was granted · succeed / fail: a turn or a check decided · wait: the gate asked the
 * user · resume: a reply (or auto-decision) needs a new process, so the job queues for a slot ·
 * continue: a reply went to a live process · rescue: a waiting sticky job lost its live process
 * and, by `sticky_recovery: "resume"`, keeps waiting to resume its session · requeue: the daemon
 * stopped after a turn was stored as started but before its engine process was, so the turn never
 * began and runs once now · cancel: jobs/cancel.
 */
export const JOB_EVENTS = ['start', 'succeed', 'fail', 'wait', 'resume', 'continue', 'rescue', 'requeue', 'cancel'] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];

export const TRANSITIONS: Readonly<Record<JobStatus, Partial<Record<JobEvent, JobStatus>>>> = {
  queued: { start: 'running', fail: 'failed', cancel: 'canceled' },
  running: { succeed: 'succeeded', fail: 'failed', wait: 'waiting_user', requeue: 'queued', cancel: 'canceled' },
  waiting_user: { resume: 'queued', continue: 'running', rescue: 'waiting_user', fail: 'failed', cancel: 'canceled' },
  succeeded: {},
  failed: {},
  canceled: {},
};

/** Where `event` leads from `status`, or null when the table has no such move. */
export function nextStatus(status: JobStatus, event: JobEvent): JobStatus | null {
  return TRANSITIONS[status][event] ?? null;
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
