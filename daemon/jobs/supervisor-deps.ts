import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import type { Logger } from '../base/logger.js';
import type { Spawner } from '../process/spawn.js';
import type { JobNetworks } from '../network/job-networks.js';
import type { JobSandbox } from '../sandbox/job-sandbox.js';
import type { SkillRegistry } from '../skills/registry.js';
import type { SlotPool } from '../slots/pool.js';
import type { JobDocs } from '../store/job-docs.js';
import type { Store } from '../store/store.js';
import type { EngineName, InteractiveProfile } from '../model/job.js';
import type { ScriptedSeeds } from '../engines/scripted-seeds.js';
import type { JobQueries } from './queries.js';
import type { JobEvents } from '../model/events.js';

/** What the supervisor runs jobs with (daemon/main.ts puts it together). */
export interface SupervisorDeps {
  store: Store;
  /** A job's request, skill snapshot, rounds, pending question and result. */
  docs: JobDocs;
  events: JobEvents;
  pool: SlotPool;
  spawner: Spawner;
  clock: Clock;
  logger: Logger;
  skills: SkillRegistry;
  config: Config;
  /** Read-only views of jobs, shared with the API. */
  queries: JobQueries;
  /** `own` takes the place of the configured variables (engines/info.ts). */
  engineEnv(name: EngineName, live?: boolean, own?: Readonly<Record<string, string>>): Record<string, string>;
  profileFor(name: EngineName): Promise<InteractiveProfile>;
  /** A queue shared with other daemons (cluster/member.ts): new jobs wait there to be claimed, not for this daemon's slots. */
  sharedQueue: { claimSoon(): void } | null;
  /** Each job's sandbox (docs/sandbox.md). */
  sandbox: JobSandbox;
  /** Each running job's own network (docs/network.md). */
  networks: JobNetworks;
  /** The disk space a folder takes (a job's workspace, held to `limits.workspace`). */
  diskUsage(dir: string): Promise<number>;
  /** What a test job's engine finds made in its new home (engines/scripted-seeds.ts). */
  scriptedSeeds: Pick<ScriptedSeeds, 'files'>;
}
