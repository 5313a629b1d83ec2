import type { RpcClient } from '../rpc/client.js';
import { jobEvents } from './events.js';
import { eventLine } from './format.js';
import { TERMINAL_STATUSES, type JobEvent, type JobView } from './wire.js';

/** The most refused connections `show` lists; `watch` shows every one. */
const MAX_LISTED = 20;

/**
 * The connections a finished job's network refused (docs/network.md, "Refusals"), as lines for
 * `skillctl show`: read from its events, replayed up to its `finished`. A job still going has
 * no end to replay to (`skillctl watch` shows its refusals as they come). Empty when there were
 * none.
 */
export async function refusalLines(client: RpcClient, job: JobView): Promise<string[]> {
  if (!TERMINAL_STATUSES.includes(job.status)) return [];
  const refused: JobEvent[] = [];
  for await (const event of jobEvents(client, { job_id: job.job_id, after_seq: 0 })) {
    if (event.type === 'network_refused') refused.push(event);
    if (event.type === 'finished') break;
  }
  if (refused.length === 0) return [];
  const more = refused.length > MAX_LISTED ? [`  … and ${refused.length - MAX_LISTED} more (skillctl watch ${job.job_id} replays them all)`] : [];
  return [`refused connections (${refused.length}):`, ...refused.slice(0, MAX_LISTED).map((event) => `  ${eventLine(event)}`), ...more];
}
