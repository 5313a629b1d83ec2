/**
 * The host a shared store's writes come from, and the epoch of its lease they belong to (the
 * cluster's host lease keeps both). A write counts only while that epoch is current, so a host
 * the others took for gone cannot change the jobs that were settled for it.
 */
export interface HostEpoch {
  readonly hostId: string;
  readonly epoch: number;
}

/** The SQL condition under which a write of a host counts: its epoch is current. Parameters `me` and `epoch` are the caller's. */
export function fence(me: string, epoch: string): string {
  return `EXISTS (SELECT 1 FROM skilld.hosts WHERE host_id = ${me} AND epoch = ${epoch} AND state = 'live')`;
}
