import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import type { Logger } from '../base/logger.js';
import type { SlotPool } from '../slots/pool.js';
import { Listener } from '../store/pg/listener.js';
import { QUEUED_CHANNEL } from '../store/pg/pg-docs.js';
import { EVENTS_CHANNEL, type PgEvents } from '../store/pg/pg-events.js';
import type { Pool } from '../store/pg/pool.js';
import type { Custody } from './custody.js';
import { bootToken, type HostLease } from './host-lease.js';
import { ANSWERS_CHANNEL, type Carry, Mailbox, REQUESTS_CHANNEL } from './mailbox.js';
import { ClusterMember, type MemberJobs } from './member.js';

/** What joining takes of the shared store (cluster/shared-storage.ts opens it). */
export interface JoinStorage {
  url: string;
  pool: Pool;
  lease: HostLease;
  custody: Custody;
  events: PgEvents;
}

export interface JoinDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  pool: SlotPool;
  jobs: MemberJobs;
  engines: readonly string[];
  version: string;
  onFenced(): void;
}

/** This daemon among the hosts of a shared store, from joining (before recovery) to leaving (at a clean stop). */
export interface Membership {
  member: ClusterMember;
  /** Requests for jobs other hosts hold, and theirs for this host's jobs. */
  mailbox: Mailbox;
  /** After recovery: hear announcements, start claiming, renewing and settling, and carry out other hosts' requests with `carry`. */
  start(carry: Carry): Promise<void>;
  stop(): Promise<void>;
}

/** Joins the hosts: a new epoch of this host's lease, so that recovery's writes count. */
export async function joinCluster(shared: JoinStorage, d: JoinDeps): Promise<Membership> {
  await shared.lease.join(await bootToken(d.config.state_dir), d.engines, { version: d.version, pid: process.pid, max_concurrent: d.config.max_concurrent });
  const member = new ClusterMember({
    lease: shared.lease, custody: shared.custody, pool: d.pool, jobs: d.jobs, clock: d.clock, logger: d.logger,
    engines: d.engines, pinnedGraceSec: d.config.pinned_grace_sec, onFenced: d.onFenced,
  });
  const mailbox = new Mailbox(shared.pool, shared.lease, d.clock, d.logger);
  const handlers = new Map([
    [QUEUED_CHANNEL, () => member.claimSoon()],
    [EVENTS_CHANNEL, (payload: string) => shared.events.heard(payload)],
    [REQUESTS_CHANNEL, (payload: string) => (payload === d.config.host_id ? void mailbox.drain() : undefined)],
    [ANSWERS_CHANNEL, (payload: string) => mailbox.answered(payload)],
  ]);
  // What was announced while the connection was away is found after each (re)connection.
  const listener = new Listener(shared.url, d.clock, d.logger, handlers, () => {
    member.claimSoon();
    shared.events.catchUp();
    mailbox.caughtUp();
  });
  d.logger.info({ host_id: d.config.host_id, epoch: shared.lease.epoch, engines: d.engines }, 'joined the hosts of the shared store');
  return {
    member,
    mailbox,
    start: async (carry) => {
      await listener.start();
      member.start();
      mailbox.start(carry);
    },
    stop: async () => {
      mailbox.stop();
      await member.stop().catch((error: unknown) => d.logger.warn({ err: error }, 'could not leave the hosts cleanly; the others settle this host\'s jobs once its lease lapses'));
      await listener.close();
    },
  };
}
