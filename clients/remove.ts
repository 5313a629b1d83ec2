import { flagOpt } from './args.js';
import type { Command } from './command.js';
import { json } from './format.js';

/** What jobs/remove answers (docs/protocol.md). */
interface RemoveAnswer {
  removed: string[];
  canceled: string[];
}

/**
 * `rm <job>...`: jobs/remove, as `docker rm` removes containers: finished jobs go with their
 * events, results and run folders; a job still active is refused (nothing is removed) unless
 * --force, which cancels it first.
 */
export const rmCommand: Command = {
  name: 'rm',
  usage: 'rm <job>... [-f|--force]',
  summary: 'remove finished jobs for good, with their events, results and run folders (an active job is refused unless --force)',
  options: { force: { type: 'boolean', short: 'f', description: 'cancel a job that has not finished, then remove it' } },
  positionals: [1, 100],
  jobArg: 0,
  jobArgRepeats: true,
  examples: ['rm 3f9c1d2', 'rm 3f9c1d2 7be0a41 --force', 'rm $(skillctl jobs --status failed -q)  # every failed job'],
  details: ['Every job named is checked first: if one cannot be removed (not found, or active without --force), none is. skillctl jobs prune removes jobs by age or status.'],
  run: async (ctx, inv) => {
    // Each short id was resolved before (jobArgRepeats).
    const ids = [...inv.positionals];
    const answer = await ctx.client.request<RemoveAnswer>('jobs/remove', { job_ids: [...new Set(ids)], force: flagOpt(inv.values, 'force') });
    if (ctx.json) ctx.print(json(answer));
    else for (const id of answer.removed) ctx.print(answer.canceled.includes(id) ? `${id} canceled and removed` : `${id} removed`);
    const left = ids.filter((id) => !answer.removed.includes(id));
    // The daemon refuses an active job (or cancels it first): one not removed was gone already.
    for (const id of left) ctx.warn(`${id} was not removed: another request removed it meanwhile`);
    return left.length === 0 ? 0 : 1;
  },
};
