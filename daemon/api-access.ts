import { SkilldError } from '../rpc/errors.js';
import type { MethodHandler } from '../rpc/dispatcher.js';
import type { MethodName } from '../rpc/methods.js';
import type { UserDirectory } from './base/users.js';
import { maySee, visibleTo, type Viewer, type VisibleTo } from './model/access.js';
import type { Job } from './model/job.js';
import type { Store } from './store/store.js';

/** The methods that name one job: a caller who may not see it is answered as if it did not exist. */
const ONE_JOB: readonly MethodName[] = ['jobs/get', 'jobs/retry', 'jobs/cancel', 'jobs/pending', 'jobs/reply', 'jobs/history', 'jobs/result', 'jobs/logs', 'jobs/artifact', 'jobs/subscribe'];

/**
 * The methods, each that names a job (`job_id`) answering JOB_NOT_FOUND to a caller who may not
 * see it (docs/access.md), as a forge answers 404 for a private repository: whether the job exists
 * is not told either. Checked on the host that answers, from the owner stored with the job.
 */
export function guardJobs<C extends object>(methods: Record<MethodName, MethodHandler<C>>, viewerOf: (conn: C) => Viewer, store: Pick<Store, 'getJob'>): Record<MethodName, MethodHandler<C>> {
  const guarded = { ...methods };
  for (const name of ONE_JOB) {
    const handler = methods[name];
    guarded[name] = async (params, conn) => {
      const jobId = (params as { job_id?: unknown } | undefined)?.job_id;
      if (typeof jobId === 'string') await requireVisible(viewerOf(conn), jobId, store);
      return handler(params, conn);
    };
  }
  return guarded;
}

/** Throws JOB_NOT_FOUND, worded as for a job that does not exist, when `viewer` may not see the job. */
export async function requireVisible(viewer: Viewer, jobId: string, store: Pick<Store, 'getJob'>): Promise<void> {
  if (viewer.all) return;
  const job = await store.getJob(jobId);
  if (job !== undefined && !maySee(viewer, job)) throw new SkilldError('JOB_NOT_FOUND', `no job "${jobId}"`);
}

/** Throws NOT_PERMITTED unless `viewer` sees every job (an administrator, or anyone in `shared` access): for what concerns every job. */
export function requireAdmin(viewer: Viewer, what: string): void {
  if (!viewer.all) throw new SkilldError('NOT_PERMITTED', `only an administrator may ${what} (root, the daemon's own user, or access.admins: docs/access.md)`);
}

/** What a list is filtered by for `viewer`: nothing for one who sees every job. */
export function listView(viewer: Viewer): { visible_to?: VisibleTo } {
  return viewer.all ? {} : { visible_to: visibleTo(viewer) };
}

/** A prune's filter for `viewer`: the jobs it may act on; none for one who sees every job. */
export function pruneFilter(viewer: Viewer): ((job: Job) => boolean) | undefined {
  return viewer.all ? undefined : (job) => maySee(viewer, job);
}

/**
 * A request's `share_with` entries, each naming a user or group the host knows: an entry that
 * names none is refused, named (INVALID_PARAMS), before anything is stored.
 */
export function checkShareWith(entries: readonly string[] | undefined, users: UserDirectory): void {
  for (const entry of entries ?? []) {
    const [kind, name = ''] = entry.split(':', 2);
    const known = kind === 'user' ? users.userNamed(name) !== null : users.groupExists(name);
    if (!known) throw new SkilldError('INVALID_PARAMS', `share_with entry "${entry}" names no ${kind} on this host`, { details: { field: 'share_with', entry } });
  }
}

