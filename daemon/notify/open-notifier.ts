import { join } from 'node:path';
import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import type { Logger } from '../base/logger.js';
import type { JobQueries } from '../jobs/queries.js';
import type { Store } from '../store/store.js';
import { Notifier } from './notifier.js';
import { Outbox } from './outbox.js';
import { httpSender } from './sender.js';

export interface NotifierSources {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** The daemon's environment, where each webhook's secret is (checked at start: loadConfig). */
  env: Readonly<Record<string, string>>;
  version: string;
  store: Store;
  queries: JobQueries;
}

/**
 * The notifier of `config.notify`, with its outbox in `<state_dir>/notify/`. The outbox is opened
 * with no webhook configured too: what an earlier daemon still owed is given up, and said so.
 */
export async function openNotifier(s: NotifierSources): Promise<Notifier> {
  const outbox = await Outbox.open(join(s.config.state_dir, 'notify'));
  if (outbox.skipped > 0) s.logger.warn({ skipped: outbox.skipped }, 'notify: unreadable lines of the outbox were skipped');
  return new Notifier({
    hooks: s.config.notify,
    secret: (hook) => s.env[hook.secret_env] ?? '',
    outbox,
    clock: s.clock,
    logger: s.logger,
    lookup: { job: (jobId) => s.store.getJob(jobId), pending: async (jobId) => (await s.queries.pending(jobId)).pending },
    send: httpSender(s.clock),
    userAgent: `skilld/${s.version}`,
  });
}
