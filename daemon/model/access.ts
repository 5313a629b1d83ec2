import { SHARE_ENTRY_PATTERN } from '../../rpc/methods.js';
import type { Job } from './job.js';

/**
 * Who asks (docs/access.md): the user a connection's peer credentials name, the groups the host
 * puts that user in, and whether that user is an administrator (root, the daemon's own user, or
 * one the config's `access.admins` names). `all`: this caller sees every job, as an
 * administrator does or as everyone does in `shared` access.
 */
export interface Viewer {
  uid: number;
  user: string;
  groups: readonly string[];
  all: boolean;
}

/** A `share_with` entry: `user:<name>` or `group:<name>`. */
export const SHARE_ENTRY = new RegExp(SHARE_ENTRY_PATTERN);

/** Whose view a list is, as a store filters it: the viewer's user name and the share entries that name it. */
export interface VisibleTo {
  user: string;
  entries: readonly string[];
}

/** The view of a viewer who does not see every job: its user, and the entries of its user and of each of its groups. */
export function visibleTo(viewer: Pick<Viewer, 'user' | 'groups'>): VisibleTo {
  return { user: viewer.user, entries: [`user:${viewer.user}`, ...viewer.groups.map((group) => `group:${group}`)] };
}

/**
 * Whether the job is seen in view `to`: its owner's (by user name: the hosts of a cluster may
 * number users differently), or shared with one of its entries. A job stored before owners were
 * recorded has none: it is seen by administrators alone.
 */
export function seenBy(job: { owner?: { user: string } | null | undefined; share_with?: readonly string[] | undefined }, to: VisibleTo): boolean {
  if (job.owner !== undefined && job.owner !== null && job.owner.user === to.user) return true;
  const shared = job.share_with ?? [];
  return shared.length > 0 && to.entries.some((entry) => shared.includes(entry));
}

/** Whether `viewer` may see and act on `job`: everyone with `all`, else as `seenBy` says. */
export function maySee(viewer: Viewer, job: Pick<Job, 'owner' | 'share_with'>): boolean {
  return viewer.all || seenBy(job, visibleTo(viewer));
}
