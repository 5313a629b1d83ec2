import type { RpcClient } from '../rpc/client.js';
import { UsageError } from './args.js';
import { table } from './format.js';
import { agoOf } from './time-text.js';
import type { JobView } from './wire.js';

/**
 * A whole job id as the daemon makes them (daemon/jobs/new-job.ts): 5 random bytes in hex, then
 * the time in base 36; or as it made them before, time first.
 */
export const JOB_ID_PATTERN = /^job-(?:[0-9a-f]{10}-[0-9a-z]{9}|[0-9a-z]{9}-[0-9a-f]{10})$/;

/** How many matches an ambiguous prefix lists. */
export const MATCHES_SHOWN = 10;

/** How many matches skillctl asks for (jobs/list's largest page), to say how many more there are. */
export const MATCHES_ASKED = 1000;

/** The id prefix a short id stands for: `3f9c1d` and `job-3f9c1d` both mean `job-3f9c1d`. */
export function jobIdPrefix(given: string): string {
  return given.startsWith('job-') ? given : `job-${given}`;
}

/** What a short id came to: one job, none (the daemon's JOB_NOT_FOUND will say so), or several (a usage error). */
export type Resolution = { id: string } | { none: true } | { ambiguous: string };

/**
 * Picks the job a short id means among the jobs whose id starts with its prefix, newest first;
 * `more` when the daemon had more than `matches`. A match equal to what was typed wins.
 */
export function pickJob(given: string, matches: readonly JobView[], more: boolean, now: number): Resolution {
  const exact = matches.find((job) => job.job_id === given || job.job_id === jobIdPrefix(given));
  if (exact !== undefined) return { id: exact.job_id };
  const [only] = matches;
  if (only === undefined) return { none: true };
  if (matches.length === 1 && !more) return { id: only.job_id };
  const shown = matches.slice(0, MATCHES_SHOWN);
  const rows = shown.map((job) => [job.job_id, job.skill_id, job.status, agoOf(job.created_at, now)]);
  const lines = table(['JOB_ID', 'SKILL', 'STATUS', 'CREATED'], rows).split('\n').map((line) => `  ${line}`);
  const left = matches.length - shown.length;
  if (left > 0 || more) lines.push(`  and ${left}${more ? '+' : ''} more`);
  const count = `${matches.length}${more ? '+' : ''}`;
  return { ambiguous: `job id "${given}" is ambiguous: ${count} jobs start with ${jobIdPrefix(given)}\n${lines.join('\n')}` };
}

/**
 * The whole id for what the user typed: a whole id as it is; anything else as a prefix, looked
 * up with jobs/list `id_prefix`. No match gives back what was typed, so that the command's own
 * request gets the daemon's JOB_NOT_FOUND; several are a UsageError listing them.
 */
export async function resolveJobId(client: RpcClient, given: string, now: number = Date.now()): Promise<string> {
  if (given === '') throw new UsageError('the job id is empty');
  if (JOB_ID_PATTERN.test(given)) return given;
  const answer = await client.request<{ jobs: JobView[]; next: string | null }>('jobs/list', { id_prefix: jobIdPrefix(given), limit: MATCHES_ASKED });
  const picked = pickJob(given, answer.jobs, answer.next !== null, now);
  if ('ambiguous' in picked) throw new UsageError(picked.ambiguous);
  return 'id' in picked ? picked.id : given;
}
