import { flagOpt } from './args.js';
import { arg, type Command } from './command.js';
import { json } from './format.js';
import type { JobView } from './wire.js';

/** `retry <job>`: jobs/retry; the new job's id, or with --wait its result, as `run` does. */
export const retryCommand: Command = {
  name: 'retry',
  usage: 'retry <job> [-w|--wait]',
  summary: "create a new job from a finished job's request and print its id",
  options: { wait: { type: 'boolean', short: 'w', description: 'follow the new job and print its output, as run --wait does (exit 1 if it fails)' } },
  positionals: [1, 1],
  jobArg: 0,
  examples: ['retry 3f9c1d2', 'retry 3f9c1d2 --wait'],
  details: [
    'The new job has the same skill, engine, mode, input, parameter, model, timeouts, approvals and reply setting as the old one, and runs the skill as it is now. ' +
      'A job that has not finished is refused with JOB_NOT_FINISHED: wait for it, or cancel it first.',
  ],
  run: async (ctx, inv) => {
    const job = await ctx.client.request<JobView>('jobs/retry', { job_id: arg(inv, 0) });
    if (!flagOpt(inv.values, 'wait')) {
      ctx.print(ctx.json ? json(job) : job.job_id);
      return 0;
    }
    return (await import('./run-follow.js')).followMade(ctx, job, ` (retry of ${arg(inv, 0)})`);
  },
};
