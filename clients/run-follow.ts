import { colourOn, paintStatus } from './colour.js';
import type { Context } from './command.js';
import { followJob, type FollowOptions } from './follow-job.js';
import { json } from './format.js';
import { interact, terminalAsk } from './interactive.js';
import { pendingText, replyHint } from './interaction-text.js';
import { onTerminal } from './on-terminal.js';
import type { JobView } from './wire.js';

/**
 * What `run`, `retry` and `attach` do once they follow a job, in a module of its own that they
 * load only then: a command that prints an id, and every other command, starts without the
 * follower, its status line and the terminal's questions (clients/table.ts).
 */

/**
 * A job just made: on a terminal, an interactive one asks its questions here; else its status is
 * said on stderr (with `note` after it) and it is followed as `waitAndReport` does.
 */
export function followMade(ctx: Context, job: JobView, note = ''): Promise<number> {
  if (job.execution_mode === 'interactive' && !ctx.json && onTerminal()) return interact(ctx, job.job_id, terminalAsk, 'start', job.created_at);
  if (!ctx.json) ctx.warn(`job ${job.job_id} ${paintStatus(job.status, job.status, colourOn(process.stderr))}${note}`);
  return waitAndReport(ctx, job.job_id, { from: 'start', notes: false, since: job.created_at });
}

/** A job rejoined where it stands (`attach`): its question asked here on a terminal, else followed as `waitAndReport` does. */
export function rejoin(ctx: Context, jobId: string): Promise<number> {
  if (!ctx.json && onTerminal()) return interact(ctx, jobId, terminalAsk, 'now');
  return waitAndReport(ctx, jobId, { from: 'now', notes: !ctx.json });
}

/**
 * Follows the job until it ends, then prints its result; or until it first waits for a reply with
 * a question to show, then prints that (the jobs/pending result with --json) and resolves to 0.
 */
export function waitAndReport(ctx: Context, jobId: string, options: Omit<FollowOptions, 'onWaiting'>): Promise<number> {
  return followJob(ctx, jobId, {
    ...options,
    onWaiting: async (out, view) => {
      out.print(ctx.json ? json(view) : pendingText(view));
      if (!ctx.json) out.warn(`reply with: ${replyHint(jobId)}`);
      return 0;
    },
  });
}
