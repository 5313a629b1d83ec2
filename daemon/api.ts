import type { LimitsView } from './limits-view.js';
import type { Connection } from '../rpc/connection.js';
import type { MethodHandler } from '../rpc/dispatcher.js';
import { SkilldError } from '../rpc/errors.js';
import { PROTOCOL_VERSION, type MethodName } from '../rpc/methods.js';
import type { Config } from './base/config.js';
import type { HostView } from './cluster/host-lease.js';
import type { EngineCatalog } from './engines/info.js';
import type { Faults } from './base/faults.js';
import type { ProfileProbe } from './engines/probe.js';
import type { ContainmentView } from './process/containment.js';
import type { SandboxView } from './sandbox/job-sandbox.js';
import type { NetworkView } from './sandbox/network-mode.js';
import type { CreateParams } from './jobs/create-request.js';
import type { ArtifactParams } from './jobs/job-artifacts.js';
import type { LogsParams } from './jobs/job-logs.js';
import { asStorageError } from './store/storage-fault.js';
import type { ReplyParams } from './jobs/reply-check.js';
import type { Supervisor } from './jobs/supervisor.js';
import type { Retention } from './jobs/retention.js';
import type { JobRouter } from './cluster/router.js';
import type { JobQueries } from './jobs/queries.js';
import type { Notifier } from './notify/notifier.js';
import { retryRequest } from './jobs/retry-request.js';
import { isTerminal, type JobStatus } from './model/states.js';
import type { EngineName, Job } from './model/job.js';
import type { SkillRegistry } from './skills/registry.js';
import { missingSkillsDirs } from './skills/registry.js';
import type { SlotPool } from './slots/pool.js';
import type { StateLockView } from './state-lock.js';
import type { Store } from './store/store.js';
import type { Subscriptions } from './subscriptions.js';
import { Callers } from './callers.js';
import type { UserDirectory } from './base/users.js';
import { maySee } from './model/access.js';
import { checkShareWith, guardJobs, listView, pruneFilter, requireAdmin, requireVisible } from './api-access.js';

export interface ApiDeps {
  version: string;
  startedAt: string;
  config: Config;
  /** Whether this daemon holds its state folder's lock (one daemon per state folder), and why not. */
  stateLock: StateLockView;
  /** How engine processes are held together and stopped. */
  containment: ContainmentView;
  limits: LimitsView;
  /** Whether jobs run in a sandbox, and why not. */
  sandbox: SandboxView;
  /** Why a new job of the engine would be refused here (no sandbox where one is required, Claude Code as root without one), or null. */
  refuseJob(engine: EngineName): SkilldError | null;
  /** Jobs' network: their own, or the host's and why (docs/network.md). */
  network: NetworkView;
  store: Store;
  pool: SlotPool;
  skills: SkillRegistry;
  engines: EngineCatalog;
  probe: ProfileProbe;
  supervisor: Supervisor;
  /** Requests that change a job go where the job is held. */
  router: JobRouter;
  queries: JobQueries;
  retention: Retention;
  subscriptions: Subscriptions;
  faults: Faults;
  /** Webhooks told when jobs wait or end (docs/notify.md). */
  notifier: Notifier;
  /** Asks the daemon to stop once the answer is sent; `engines` overrides `engines_on_stop`. */
  requestStop(engines: Config['engines_on_stop']): void;
  /** The hosts of a shared store; null: this daemon is the only one (files store). */
  hosts: (() => Promise<HostView[]>) | null;
  /** Who each connection is, and what it may see (docs/access.md). */
  callers: Callers;
  users: UserDirectory;
}

/** The method implementations; params arrive already checked against `METHOD_PARAMS`. */
export function createApi(d: ApiDeps): Record<MethodName, MethodHandler<Connection>> {
  const viewer = (conn: Connection) => d.callers.of(conn);
  return guardJobs({
    'daemon/ping': () => ({ ok: true, version: d.version, protocol: PROTOCOL_VERSION }),
    'daemon/stop': (params, conn) => {
      requireAdmin(viewer(conn), 'stop the daemon');
      const engines = (params as { engines?: Config['engines_on_stop'] }).engines ?? d.config.engines_on_stop;
      d.requestStop(engines);
      return { stopping: true, engines };
    },
    'daemon/status': async () => ({
      version: d.version,
      pid: process.pid,
      started_at: d.startedAt,
      config_file: d.config.config_file,
      socket: d.config.socket,
      state_dir: d.config.state_dir,
      state_lock: d.stateLock,
      skills_dirs: d.config.skills_dirs,
      default_engine: d.config.default_engine,
      slots: await slotStats(d),
      jobs: await d.store.countByStatus(),
      skills: d.skills.counts(),
      missing_skills_dirs: missingSkillsDirs(d.config.skills_dirs),
      notices: d.store.notices,
      internal_errors: d.faults.stats(),
      containment: d.containment,
      limits: d.limits,
      sandbox: d.sandbox,
      network: d.network,
      retention: d.retention.view(),
    }),
    'daemon/hosts': async () => ({ hosts: d.hosts === null ? [await thisHost(d)] : await d.hosts() }),
    'skills/list': () => ({ skills: d.skills.list() }),
    'skills/get': (params) => {
      const id = (params as { skill_id: string }).skill_id;
      const entry = d.skills.require(id);
      const instructions = entry.current?.files.get('SKILL.md')?.toString('utf8') ?? null;
      return { ...d.skills.view(entry), schemas: entry.current?.schemas ?? { input: null, parameter: null, output: null }, instructions };
    },
    'skills/subscribe': (_params, conn) => d.subscriptions.watchSkills(conn),
    'engines/list': async () => ({ engines: await d.engines.list((name) => d.probe.profileFor(name), (name) => d.refuseJob(name)?.message ?? null) }),
    'jobs/create': (params, conn) => {
      checkShareWith((params as CreateParams).share_with, d.users);
      return d.supervisor.create(params as CreateParams, Callers.ownerOf(viewer(conn)));
    },
    'jobs/get': async (params) => {
      const jobId = (params as { job_id: string }).job_id;
      const [job] = await withHosts(d, [await d.supervisor.get(jobId)]);
      // What the job was asked to do, as jobs/create named it.
      return { ...job, ...(await d.queries.asked(jobId)) };
    },
    'jobs/list': async (params, conn) => {
      const p = params as { status?: JobStatus; skill_id?: string; id_prefix?: string; limit?: number; before?: string };
      if (p.before !== undefined) {
        await d.queries.requireJob(p.before);
        await requireVisible(viewer(conn), p.before, d.store);
      }
      const page = await d.store.listJobs({ ...p, limit: p.limit ?? 50, ...listView(viewer(conn)) });
      return { ...page, jobs: await withHosts(d, page.jobs) };
    },
    'jobs/retry': async (params, conn) => d.supervisor.create(await retryRequest(d.queries, (params as { job_id: string }).job_id), Callers.ownerOf(viewer(conn))),
    'jobs/cancel': (params) => d.router.cancel((params as { job_id: string }).job_id),
    'jobs/pending': (params) => d.queries.pending((params as { job_id: string }).job_id),
    'jobs/reply': (params) => d.router.reply(params as ReplyParams),
    'jobs/history': (params) => {
      const p = params as { job_id: string; after?: number };
      return d.queries.history(p.job_id, p.after ?? 0);
    },
    'jobs/result': (params) => d.queries.result((params as { job_id: string }).job_id),
    'jobs/logs': (params) => d.router.logs(params as LogsParams),
    'jobs/artifact': (params) => d.router.artifact(params as ArtifactParams),
    'jobs/prune': (params, conn) => {
      const p = params as { older_than_sec?: number; status?: JobStatus[]; dry_run?: boolean };
      return d.retention.prune({ older_than_ms: p.older_than_sec === undefined ? undefined : p.older_than_sec * 1000, statuses: p.status }, p.dry_run ?? false, pruneFilter(viewer(conn)));
    },
    'jobs/remove': async (params, conn) => {
      const p = params as { job_ids: string[]; force?: boolean };
      const who = viewer(conn);
      // Every job checked before any is touched: a request naming one it may not remove removes none.
      const jobs: Job[] = [];
      for (const jobId of p.job_ids) {
        await requireVisible(who, jobId, d.store);
        jobs.push(await d.queries.get(jobId));
      }
      const active = jobs.filter((job) => !isTerminal(job.status));
      const first = active[0];
      if (first !== undefined && p.force !== true) {
        throw new SkilldError('JOB_NOT_FINISHED', `job "${first.job_id}" is ${first.status}; cancel it first, or remove it with force`, { details: { job_ids: active.map((job) => job.job_id), status: first.status } });
      }
      for (const job of active) await d.router.cancel(job.job_id);
      const removed = await d.retention.remove(p.job_ids);
      return { removed, canceled: active.map((job) => job.job_id) };
    },
    'jobs/subscribe': async (params, conn) => {
      const p = params as { job_id?: string; after_seq?: number };
      if (p.job_id !== undefined) await d.queries.requireJob(p.job_id);
      const who = viewer(conn);
      // Of every job, those this caller may see: each job is looked up once, at its first event.
      const sees = who.all ? undefined : async (jobId: string) => {
        const job = await d.store.getJob(jobId);
        return job !== undefined && maySee(who, job);
      };
      return d.subscriptions.subscribe(conn, p, sees);
    },
    'jobs/unsubscribe': (params, conn) => d.subscriptions.unsubscribe(conn, (params as { subscription_id: string }).subscription_id),
    'notify/log': (params, conn) => {
      // Every job's deliveries, and the receivers' addresses: an operator's view.
      requireAdmin(viewer(conn), 'read the notification log');
      return d.notifier.log((params as { limit?: number }).limit ?? 20);
    },
  }, viewer, d.store);
}

/**
 * The methods, with a storage that cannot be reached answered as `STORAGE_UNAVAILABLE` (retryable)
 * by every method, reads included, rather than as an internal error.
 */
export function withStorageErrors<C>(methods: Record<MethodName, MethodHandler<C>>): Record<MethodName, MethodHandler<C>> {
  return eachWrapped(methods, (handler) => (params, context) => {
    try {
      const result = handler(params, context);
      return result instanceof Promise ? result.catch(storageFailure) : result;
    } catch (error) {
      return storageFailure(error);
    }
  });
}

/**
 * A request that names a job still being recovered after a restart (`job_id`, or one of
 * `job_ids`) waits until that job is taken up or settled (docs/restarts.md): it never sees nor
 * changes a job half recovered.
 */
export function afterRecovery<C>(methods: Record<MethodName, MethodHandler<C>>, recovering: (jobId: string) => Promise<void> | null): Record<MethodName, MethodHandler<C>> {
  return eachWrapped(methods, (handler) => (params, context) => {
    const waits = namedJobs(params).map(recovering).filter((wait) => wait !== null);
    return waits.length === 0 ? handler(params, context) : Promise.all(waits).then(() => handler(params, context));
  });
}

/** The jobs a request names: its `job_id`, and its `job_ids` (jobs/remove). */
function namedJobs(params: unknown): string[] {
  const { job_id: one, job_ids: many } = (params ?? {}) as { job_id?: unknown; job_ids?: unknown };
  return [one, ...(Array.isArray(many) ? many : [])].filter((id): id is string => typeof id === 'string');
}

/** Every method's handler, wrapped by `wrap`. */
function eachWrapped<C>(methods: Record<MethodName, MethodHandler<C>>, wrap: (handler: MethodHandler<C>) => MethodHandler<C>): Record<MethodName, MethodHandler<C>> {
  const wrapped = {} as Record<MethodName, MethodHandler<C>>;
  for (const [name, handler] of Object.entries(methods) as Array<[MethodName, MethodHandler<C>]>) wrapped[name] = wrap(handler);
  return wrapped;
}

function storageFailure(error: unknown): never {
  throw asStorageError(error, 'the request', 'answer');
}

/**
 * Jobs as `jobs/get` and `jobs/list` answer them: each with `host`, the host that holds it (or
 * last held it); null while a queued job of a shared store waits for any host to claim it.
 */
async function withHosts(d: ApiDeps, jobs: Job[]): Promise<Array<Job & { host: string | null }>> {
  if (d.hosts === null) return jobs.map((job) => ({ ...job, host: d.config.host_id }));
  const holders = await d.store.holders(jobs.map((job) => job.job_id));
  return jobs.map((job) => ({ ...job, host: holders.get(job.job_id) ?? null }));
}

/** The one host of a daemon with a store of its own. */
async function thisHost(d: ApiDeps): Promise<HostView> {
  const counts = await d.store.countByStatus();
  const jobs = { queued: counts.queued, running: counts.running, waiting_user: counts.waiting_user };
  return { host_id: d.config.host_id, state: 'live', lease_until: null, version: d.version, pid: process.pid, max_concurrent: d.config.max_concurrent, jobs };
}

/** This daemon's slots; jobs waiting for one include those in a shared store's queue, which any host may claim. */
async function slotStats(d: ApiDeps): Promise<{ max: number; used: number; queued: number }> {
  const slots = d.pool.stats();
  return { ...slots, queued: slots.queued + (await d.router.unclaimed()) };
}
