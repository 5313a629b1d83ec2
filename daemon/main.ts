import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Dispatcher } from '../rpc/dispatcher.js';
import { checkFolderTrust, type FolderUse } from '../rpc/folder-trust.js';
import { bindMethods } from '../rpc/methods.js';
import { RpcServer, type ListenTarget } from '../rpc/server.js';
import { afterRecovery, createApi, withStorageErrors } from './api.js';
import { systemClock } from './base/clock.js';
import type { Config } from './base/config.js';
import { ScriptedSeeds } from './engines/scripted-seeds.js';
import { EngineCatalog } from './engines/info.js';
import { ProfileProbe } from './engines/probe.js';
import { runShort } from './process/run-short.js';
import { Faults } from './base/faults.js';
import { Supervisor } from './jobs/supervisor.js';
import { ORPHAN_GRACE_MS, Retention } from './jobs/retention.js';
import { JobRouter } from './cluster/router.js';
import { JobQueries } from './jobs/queries.js';
import type { Logger } from './base/logger.js';
import { chooseContainment } from './process/choose-containment.js';
import { createSpawner } from './process/spawn.js';
import { probeLimits, sweepV1 } from './process/cgroup-limits.js';
import { limitsView } from './limits-view.js';
import { diskUsage } from './sandbox/disk-usage.js';
import { definedEnv, engineBaseEnv } from './process/env.js';
import { notifySystemd } from './systemd-notify.js';
import { tellingMoves } from './notify/heard-moves.js';
import { openNotifier } from './notify/open-notifier.js';
import { openSandbox } from './sandbox/open-sandbox.js';
import { JobNetworks } from './network/job-networks.js';
import { hostUsers } from './base/users.js';
import { loadPeerCredentials } from '../rpc/peer-credentials.js';
import { Callers } from './callers.js';
import { openUpstreams } from './network/gateway.js';
import { isTerminal } from './model/states.js';
import { missingSkillsDirs, SkillRegistry } from './skills/registry.js';
import { SkillWatcher } from './skills/watch.js';
import { SlotPool } from './slots/pool.js';
import { openFilesStorage } from './store/open-store.js';
import { takeStateLock, type StateLock } from './state-lock.js';
import { Subscriptions } from './subscriptions.js';

/** The package root, where `package.json` and the bundled `skills/` live (two levels above this file, built or not). */
export const PACKAGE_ROOT = findPackageRoot();
export const BUNDLED_SKILLS_DIR = join(PACKAGE_ROOT, 'skills');

/** A running daemon; `close()` is idempotent and ordered. */
export interface Daemon {
  /** Stops the daemon; `engines` (else the config's `engines_on_stop`) says whether engine processes stop with it. */
  close(engines?: Config['engines_on_stop']): Promise<void>;
  /** Resolves when a client asked the daemon to stop (`daemon/stop`), with what to do with the engines. */
  stopRequested: Promise<Config['engines_on_stop']>;
  /** Resolves when the daemon must stop by itself: the other hosts of its shared store took it for gone. */
  fenced: Promise<void>;
}

/**
 * The composition root: the only place that builds the real clock, spawner, store, logger and
 * watcher. The socket accepts connections once recovery has decided what to take up; each job
 * under recovery waits on its own lock until it is taken up or settled (see jobs/recovery.ts).
 */
export async function startDaemon(config: Config, logger: Logger, listen: ListenTarget): Promise<Daemon> {
  const clock = systemClock;
  // The state folder's lock first: a second daemon on the folder stops here, before it changes
  // anything (cgroups included), reads the state or binds its socket.
  const stateLock = await lockStateFolder(config, logger);
  // The sandbox's probe runs bubblewrap and waits for it: that runs while the rest starts (it creates
  // nothing of the daemon's). Awaited below, where its errors stop the start; a start stopped before then has no use for it.
  const daemonEnv = definedEnv(process.env);
  const sandboxOpened = openSandbox(config, daemonEnv, runShort, logger);
  sandboxOpened.catch(() => undefined);
  // Next, before anything else is created, so that a "cgroup" setting that cannot be met stops start-up.
  const { containment, fallback } = await chooseContainment(config.process_containment, clock, config.kill_grace_ms);
  if (fallback !== null) logger.info({ problem: fallback }, 'cgroup v2 is not usable: engine processes are held by process group');
  const limitSupport = probeLimits(containment.view.kind === 'cgroup' ? containment.view.path : null);
  const faults = new Faults(logger, () => clock.now());
  const unguard = faults.guardProcess();
  const version = await readVersion();
  const runsDir = join(config.state_dir, 'runs');
  await mkdir(runsDir, { recursive: true, mode: 0o700 });
  let requestStop!: (engines: Config['engines_on_stop']) => void;
  // The stop begins once the request's answer is on its way (its handler and reply settle in microtasks).
  const stopRequested = new Promise<Config['engines_on_stop']>((resolve) => (requestStop = (engines) => setImmediate(() => resolve(engines))));
  let onFenced!: () => void;
  const fenced = new Promise<void>((resolve) => (onFenced = resolve));
  // The database driver is loaded only for a PostgreSQL store.
  const shared = config.store === 'files' ? null : await (await import('./cluster/shared-storage.js')).openSharedStorage(config, runsDir, clock, logger, version, () => onFenced());
  const { store, docs, events } = shared ?? (await openFilesStorage(config, runsDir, clock));
  for (const notice of store.notices) logger.error({ ...notice }, 'state problem found at start');
  const skills = new SkillRegistry(config.skills_dirs, config.default_engine);
  await skills.loadAll();
  const pool = new SlotPool(config.max_concurrent);
  const sandbox = await sandboxOpened;
  const engines = new EngineCatalog(config.engines, engineBaseEnv(daemonEnv, config.sandbox.pass_env));
  const probe = new ProfileProbe(config.engines, (name) => engines.envFor(name), runShort);
  const queries = new JobQueries(store, docs, runsDir);
  // Before recovery, whose moves (a job settled at start) are told too.
  const notifier = await openNotifier({ config, clock, logger, env: daemonEnv, version, store, queries });
  // Joined before recovery, whose writes count only in this host's new epoch.
  const membership = shared === null ? null : await shared.join({
    config, clock, logger, pool, version, onFenced,
    // A host claims only jobs it may start.
    engines: (await engines.available()).filter((name) => sandbox.refuseJob(name) === null),
    jobs: { adopt: (id) => supervisor.adopt(id), failTakenOver: (id, error) => supervisor.failTakenOver(id, error) },
  });
  const networks = new JobNetworks({
    dir: join(config.state_dir, 'net'), clock,
    refused: (jobId, refusal) => events.emit(jobId, 'network_refused', refusal),
    gateways: openUpstreams(config.engines, daemonEnv),
    retrying: (jobId, retry) => events.emit(jobId, 'provider_retry', retry),
  });
  const supervisor = new Supervisor({
    store, docs, events: tellingMoves(events, (jobId, to) => notifier.moved(jobId, to)), pool, clock, logger, skills, config, queries,
    spawner: createSpawner(clock, containment, limitSupport),
    engineEnv: (name, live, own) => engines.envFor(name, live, own),
    profileFor: (name) => probe.profileFor(name),
    sharedQueue: membership?.member ?? null,
    sandbox,
    networks,
    diskUsage,
    scriptedSeeds: new ScriptedSeeds({ dir: join(config.state_dir, 'scripted-seeds'), command: (name) => config.engines[name].command, envFor: (name, own) => engines.envFor(name, false, own), run: runShort, logger }),
  });
  const retention = new Retention({
    store, runsDir, policy: config.retention, clock, logger,
    settled: (id) => supervisor.settled(id),
    closeEvents: (id) => events.close(id),
    orphanGraceMs: shared === null ? ORPHAN_GRACE_MS : 0,
  });
  const router = new JobRouter(supervisor, shared === null || membership === null ? null : { custody: shared.custody, mailbox: membership.mailbox }, config.host_id);
  const subscriptions = new Subscriptions(events, clock, logger);
  shared?.events.follow((jobId) => subscriptions.follows(jobId));
  // koffi (libc through an FFI) is loaded here, as the state lock loads it: never by an import.
  await loadPeerCredentials();
  const users = await hostUsers(() => clock.now().getTime());
  const callers = new Callers(config.access, users, process.getuid?.() ?? 0);
  const api = createApi({ callers, users, version, startedAt: clock.now().toISOString(), config, stateLock: stateLock.view, containment: containment.view, sandbox: sandbox.view, refuseJob: (engine) => sandbox.refuseJob(engine), network: sandbox.network, limits: limitsView(config.limits, limitSupport, sandbox.view), store, pool, skills, engines, probe, supervisor, router, queries, retention, subscriptions, faults, notifier, requestStop, hosts: shared === null ? null : () => shared.hosts() });
  const dispatcher = new Dispatcher(bindMethods(withStorageErrors(afterRecovery(api, (jobId) => supervisor.recoveries.of(jobId)))), (method, error) => faults.report('method', error, { method }));
  const limits = { maxConnections: config.max_connections, lineTimeoutMs: config.line_timeout_sec * 1000, idleTimeoutMs: config.idle_timeout_sec * 1000 };
  const server = new RpcServer(dispatcher, limits, (error) => faults.report('rpc_server', error), clock);
  const watcher = await SkillWatcher.start(
    config.skills_dirs,
    config.own_skills_dir,
    (id) => {
      skills.reload(id).then(
        (changed) => {
          if (!changed) return;
          logger.info({ skill_id: id, status: skills.get(id)?.error ? 'invalid' : skills.get(id) ? 'ok' : 'removed' }, 'skill reloaded');
          for (const conn of subscriptions.subscribedConnections()) conn.notify('skills/changed', { ids: [id] });
        },
        (error: unknown) => faults.report('skill_reload', error, { skill_id: id }),
      );
    },
    (error) => logger.warn({ err: error }, 'skills watcher problem'),
  );
  const missing = missingSkillsDirs(config.skills_dirs);
  if (missing.length > 0) logger.warn({ missing }, 'a skills folder in skills_dirs does not exist: create it, or fix the setting (daemon/status lists them)');
  await supervisor.recover();
  await sweepV1(limitSupport, (jobId) => store.hasJob(jobId));
  await networks.sweep(async (jobId) => !isTerminal((await store.getJob(jobId))?.status ?? 'canceled'));
  await membership?.start((method, params) => router.carry(method, params));
  await server.listen(listen);
  supervisor.recoveries.begin();
  retention.start();
  notifier.start();
  const notified = await notifySystemd('READY=1', process.env);
  if (notified !== null) logger.warn({ problem: notified }, 'could not notify systemd');
  logger.info({ version, socket: listen.kind === 'path' ? listen.path : `fd ${listen.fd}`, state_dir: config.state_dir, skills: skills.counts(), containment: containment.view, sandbox: sandbox.view, network: sandbox.network, limits: limitsView(config.limits, limitSupport, sandbox.view) }, 'skilld ready');

  let closing: Promise<void> | null = null;
  return {
    close: (engines = config.engines_on_stop) => {
      // Each step runs even when one before it failed: a stop must always reach the end.
      const step = (name: string, run: () => Promise<unknown>): Promise<void> => run().then(
        () => undefined,
        (error: unknown) => faults.report(`close_${name}`, error),
      );
      closing ??= (async () => {
        await step('notify', () => notifySystemd('STOPPING=1', process.env));
        await step('server', () => server.close());
        await step('watcher', () => watcher.close());
        await step('retention', () => retention.stop());
        await step('supervisor', () => supervisor.shutdown(engines === 'stop'));
        await step('notifier', () => notifier.close());
        await step('networks', () => networks.closeAll());
        if (membership !== null) await step('membership', () => membership.stop());
        await step('events', () => events.closeAll());
        await step('store', () => store.close());
        await step('socket', () => server.removeSocketFile());
        logger.info({}, 'skilld stopped');
        unguard();
        await new Promise<void>((resolve) => (logger.flush ? logger.flush(() => resolve()) : resolve()));
        // Last: the next daemon on this folder may start once nothing of this one writes there.
        stateLock.release();
      })();
      return closing;
    },
    fenced,
    stopRequested,
  };
}

/** The state folder: it holds the records of engine processes, which the daemon stops at its next start by their pids. */
const STATE_FOLDER: FolderUse = { action: 'keep state in', risk: 'plant records of processes for the daemon to kill at its next start' };

/**
 * Makes the state folder (0700) if it is missing, refuses it if another user could change it
 * (`checkFolderTrust`), and takes its lock: throws `StateDirLockedError` while another daemon
 * holds it. A lock that cannot be had here (no `flock`) is logged, and start-up goes on.
 */
async function lockStateFolder(config: Config, logger: Logger): Promise<StateLock> {
  await mkdir(config.state_dir, { recursive: true, mode: 0o700 });
  await checkFolderTrust(config.state_dir, STATE_FOLDER);
  const lock = await takeStateLock(config.state_dir, { pid: process.pid, socket: config.socket });
  const { path, held, reason } = lock.view;
  if (!held) logger.warn({ code: 'STATE_LOCK_UNAVAILABLE', path, problem: reason }, 'the state folder is not locked: nothing keeps a second daemon off it (one daemon per state folder)');
  if (lock.recordProblem !== null) logger.warn({ path, problem: lock.recordProblem }, "could not write this daemon's pid and socket into the lock file (the lock holds all the same)");
  return lock;
}

/** The version in the package's `package.json` (`skilld --version`, `daemon/ping`). */
export async function readVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function findPackageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // Source runs from daemon/, the build from dist/daemon/.
  return here.endsWith(join('dist', 'daemon')) ? join(here, '..', '..') : join(here, '..');
}
