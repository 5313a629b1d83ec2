import { parseDuration } from '../rpc/duration.js';
import { definedOnly, flagOpt, stringOpt, UsageError, type OptionValues } from './args.js';
import type { Context } from './command.js';
import { EXIT } from './exit-codes.js';
import { json } from './format.js';
import { terminalAsk, type Ask } from './interactive.js';
import { onTerminal } from './on-terminal.js';

/** The statuses `jobs prune --status` takes: a finished job's. */
export const PRUNABLE_STATUSES = ['succeeded', 'failed', 'canceled'] as const;

/** What jobs/prune answers (docs/retention.md). */
interface PruneAnswer {
  dry_run: boolean;
  count: number;
  job_ids: string[];
  truncated: boolean;
  selection: { finished_before: string | null; keep_newest: number | null; statuses: string[] | null };
}

/** The jobs-listing options `prune` does not take. */
const LIST_ONLY = ['skill', 'limit', 'before'] as const;

/**
 * `jobs prune`: removes finished jobs, as `docker container prune` does. With --older-than or
 * --status, the jobs they select; with neither, those the daemon's retention policy selects now.
 * Without --force it shows what would go and asks on a terminal; elsewhere it wants --force.
 */
export async function pruneJobs(ctx: Context, values: OptionValues, ask: Ask = terminalAsk): Promise<number> {
  for (const name of LIST_ONLY) if (values[name] !== undefined) throw new UsageError(`jobs prune does not take --${name}`);
  const status = stringOpt(values, 'status');
  if (status !== undefined && !(PRUNABLE_STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`jobs prune removes finished jobs only: --status must be one of ${PRUNABLE_STATUSES.join(', ')} (got ${JSON.stringify(status)})`);
  }
  const olderThan = stringOpt(values, 'older-than');
  const olderMs = olderThan === undefined ? undefined : parseDuration(olderThan);
  if (olderMs === null) throw new UsageError(`--older-than must be a duration with a unit, such as 30d, 12h or 90m (got ${JSON.stringify(olderThan)})`);
  const selection = definedOnly({ older_than_sec: olderMs === undefined ? undefined : Math.floor(olderMs / 1000), status: status === undefined ? undefined : [status] });
  const dryRun = flagOpt(values, 'dry-run');
  const quiet = flagOpt(values, 'quiet');
  if (!dryRun && !flagOpt(values, 'force')) {
    if (!onTerminal() || ctx.json || quiet) throw new UsageError('jobs prune removes jobs for good: add --force (or --dry-run to see which would go)');
    const preview = await ctx.client.request<PruneAnswer>('jobs/prune', { ...selection, dry_run: true });
    if (preview.count === 0) {
      ctx.print(`no finished jobs to remove (${selectionText(preview)})`);
      return EXIT.ok;
    }
    const answer = await ask(`${preview.count} finished job(s) would be removed (${selectionText(preview)}), with their events, results and run folders.\nRemove them? [y/N] `);
    if (answer === null || !/^y(es)?$/i.test(answer.trim())) {
      ctx.print('nothing removed');
      return EXIT.ok;
    }
  }
  const answer = await ctx.client.request<PruneAnswer>('jobs/prune', { ...selection, dry_run: dryRun });
  if (ctx.json) ctx.print(json(answer));
  else if (quiet) for (const id of answer.job_ids) ctx.print(id);
  else ctx.print(summary(answer));
  return EXIT.ok;
}

function summary(answer: PruneAnswer): string {
  const verb = answer.dry_run ? 'would remove' : 'removed';
  const head = `${verb} ${answer.count} finished job(s) (${selectionText(answer)})`;
  if (!answer.dry_run || answer.count === 0) return head;
  const more = answer.truncated ? [`… and ${answer.count - answer.job_ids.length} more`] : [];
  return [head, ...answer.job_ids, ...more].join('\n');
}

function selectionText(answer: PruneAnswer): string {
  const { finished_before, keep_newest, statuses } = answer.selection;
  const parts: string[] = [];
  if (finished_before !== null) parts.push(`finished before ${finished_before}`);
  if (keep_newest !== null) parts.push(`beyond the newest ${keep_newest}`);
  if (parts.length === 0) return 'the retention policy keeps every job';
  return `${parts.join(' or ')}${statuses === null ? '' : `, ${statuses.join(' or ')}`}`;
}
