import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLoopbackEntry, type AllowEntry } from '../base/allow-entry.js';
import type { Clock } from '../base/clock.js';
import type { BridgeListener } from '../sandbox/network-bridge.js';
import type { JobNetwork } from '../sandbox/plan.js';
import { decideDial, ownAddresses, systemLookup, type Lookup } from './addresses.js';
import type { EngineName } from '../model/job.js';
import { AllowList } from './allow-list.js';
import { listenEgressProxy, type EgressProxy } from './egress-proxy.js';
import { listenForward, type Forward } from './forward.js';
import { gatewayHandler, type ProviderRetry, type Upstream } from './gateway.js';
import { gatewayEngineSetup } from './gateway-env.js';
import { newGatewayToken, tokenHash } from './gateway-token.js';
import { JobGateway } from './job-gateway.js';
import { RefusalLimiter, type Refusal } from './refusals.js';

/** The port the proxy has inside a job's network, unless a forwarded port takes it. */
export const PROXY_PORT = 3128;
/** The proxy's socket in a job's network folder. */
const PROXY_SOCKET = 'proxy.sock';
/** What a job's network was opened with, in its folder: what a restarted daemon opens again. */
const RECORD = 'network.json';
/** The sockets are the engine's to connect to (it may run as another user); the folder is shown to it alone, read-only. */
const SOCKET_MODE = 0o666;

export interface JobNetworksDeps {
  /** The folder of the jobs' network folders (`<state_dir>/net`). */
  dir: string;
  clock: Clock;
  /** Tells a job's refused connection (a `network_refused` event). */
  refused(jobId: string, refusal: Refusal): void;
  lookup?: Lookup;
  /** The model gateway of each engine that has one (docs/network.md, "The model gateway"). */
  gateways?: Partial<Record<EngineName, Upstream>>;
  /** Tells a job's model call its provider limited, retried (a `provider_retry` event). */
  retrying?(jobId: string, retry: ProviderRetry): void;
}

/** What a job's network holds open while it runs. */
interface Open {
  proxy: EgressProxy;
  forwards: Forward[];
  gateway: JobGateway | null;
}

/** What a job's network was opened with (its record). */
interface Opened {
  entries: AllowEntry[];
  listeners: BridgeListener[];
  /** The gateway of the job's engine, and the hash of the job's token (never the token). */
  gateway?: { engine: EngineName; token_sha256: string };
}

/**
 * Each running job's own way out (docs/network.md): a folder of its own, `<dir>/<job>`, with the
 * proxy's socket and a socket per forwarded loopback port, shown read-only in its sandbox, where
 * the bridge leads its connections. Opened when its engine process starts, closed when that ends;
 * what it was opened with is kept in the folder, so that a daemon that restarts opens the same
 * again for a process it takes up.
 */
export class JobNetworks {
  readonly #d: JobNetworksDeps;
  readonly #open = new Map<string, Open>();
  readonly #limiter: RefusalLimiter;

  constructor(deps: JobNetworksDeps) {
    this.#d = deps;
    this.#limiter = new RefusalLimiter(deps.clock, deps.refused);
  }

  /**
   * Opens the network of job `jobId` with `entries` (its engine's, the config's and its skill's)
   * and returns what its sandbox is given. Its sockets listen before this returns; one still open
   * from an earlier process of the job is closed first. Where `engine` has a gateway, the job gets
   * a new token, and its engine what it needs to call through it (`gateway(jobId).setup`).
   */
  open(jobId: string, entries: readonly AllowEntry[], engine?: EngineName): JobNetwork {
    const loopback = uniqueBy(entries.filter(isLoopbackEntry), (entry) => String(entry.port));
    const taken = new Set(loopback.map((entry) => entry.port));
    let proxyPort = PROXY_PORT;
    while (taken.has(proxyPort)) proxyPort += 1;
    const listeners: BridgeListener[] = [
      { host: '127.0.0.1', port: proxyPort, socket: PROXY_SOCKET },
      // At the address the entry names (`localhost`: 127.0.0.1), inside and on the host.
      ...loopback.map((entry) => ({ host: entry.kind === 'ip' ? entry.host : '127.0.0.1', port: entry.port, socket: `forward-${entry.port}.sock` })),
    ];
    const upstream = engine === undefined ? undefined : this.#d.gateways?.[engine];
    const token = upstream === undefined ? null : newGatewayToken();
    const setup = upstream === undefined || token === null ? null : gatewayEngineSetup(engine as EngineName, `http://127.0.0.1:${proxyPort}`, upstreamPath(upstream), token);
    const opened: Opened = { entries: [...entries], listeners, ...(setup === null || token === null ? {} : { gateway: { engine: engine as EngineName, token_sha256: tokenHash(token) } }) };
    const folder = this.#folder(jobId);
    void this.#close(jobId);
    mkdirSync(folder, { recursive: true, mode: 0o755 });
    writeFileSync(join(folder, RECORD), `${JSON.stringify(opened)}\n`, { mode: 0o644 });
    this.#listen(jobId, opened, new JobGateway(setup));
    return { folder, listeners, env: { ...proxyEnv(proxyPort), ...setup?.env } };
  }

  /** The gateway of a job whose network is open and whose engine has one; null otherwise. */
  gateway(jobId: string): JobGateway | null {
    return this.#open.get(jobId)?.gateway ?? null;
  }

  /** Opens again the network a job's process was started with by an earlier daemon; false when there is none to open. */
  reopen(jobId: string): boolean {
    if (this.#open.has(jobId)) return true;
    let opened: Opened;
    try {
      opened = JSON.parse(readFileSync(join(this.#folder(jobId), RECORD), 'utf8')) as Opened;
    } catch {
      return false;
    }
    this.#listen(jobId, opened, new JobGateway(null));
    return true;
  }

  /**
   * Closes a job's network and removes its folder: its engine process has ended. Nothing listens
   * for it once this returns; the promise settles when its last connection is closed.
   */
  close(jobId: string): Promise<void> {
    const closed = this.#close(jobId);
    rmSync(this.#folder(jobId), { recursive: true, force: true });
    return closed;
  }

  /** Removes the network folders of jobs `keep` does not keep (what a stopped daemon left of finished jobs). */
  async sweep(keep: (jobId: string) => Promise<boolean>): Promise<void> {
    let names: string[] = [];
    try {
      names = readdirSync(this.#d.dir);
    } catch {
      return;
    }
    for (const name of names) if (!this.#open.has(name) && !(await keep(name))) rmSync(join(this.#d.dir, name), { recursive: true, force: true });
  }

  /** Closes every open network (the daemon stops; the folders stay for the next one). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#open.keys()].map((jobId) => this.#close(jobId)));
  }

  /** Listens for a job as `opened` says; `gateway` is its gateway's account, used where `opened` names a gateway this daemon has. */
  #listen(jobId: string, opened: Opened, gateway: JobGateway): void {
    const folder = this.#folder(jobId);
    const allow = new AllowList(opened.entries);
    const lookup = this.#d.lookup ?? systemLookup;
    const upstream = opened.gateway === undefined ? undefined : this.#d.gateways?.[opened.gateway.engine];
    const proxyAt = opened.listeners.find((one) => one.socket === PROXY_SOCKET) ?? { host: '127.0.0.1', port: PROXY_PORT };
    const origin = upstream === undefined || opened.gateway === undefined ? undefined : gatewayHandler(upstream, opened.gateway.token_sha256, {
      used: (usage) => gateway.used(usage),
      failed: (failure) => gateway.failed(failure),
      retrying: (retry) => this.#d.retrying?.(jobId, retry),
      refused: (detail) => this.#limiter.refused(jobId, { host: proxyAt.host, port: proxyAt.port, reason: 'gateway_token', detail }),
    }, this.#d.clock);
    const proxy = listenEgressProxy(join(folder, PROXY_SOCKET), {
      // The host's own addresses as they are now: an interface may have come or gone since start.
      decide: (host, port) => decideDial(host, port, allow, lookup, ownAddresses()),
      refused: (host, port, reason, detail) => this.#limiter.refused(jobId, { host, port, reason, detail }),
    }, { mode: SOCKET_MODE, ...(origin === undefined ? {} : { origin }) });
    const forwards = opened.listeners.filter((one) => one.socket !== PROXY_SOCKET).map((one) => listenForward(join(folder, one.socket), one.host, one.port, SOCKET_MODE));
    this.#open.set(jobId, { proxy, forwards, gateway: origin === undefined ? null : gateway });
  }

  /** Stops listening for a job at once (its servers close synchronously); resolves when all is closed. */
  #close(jobId: string): Promise<void> {
    const open = this.#open.get(jobId);
    if (open === undefined) return Promise.resolve();
    this.#open.delete(jobId);
    this.#limiter.forget(jobId);
    return Promise.all([open.proxy.close(), ...open.forwards.map((one) => one.close())]).then(() => undefined);
  }

  #folder(jobId: string): string {
    return join(this.#d.dir, jobId);
  }
}

/**
 * The proxy's variables: the engines and the usual tools (curl, git, npm, pip) read them, in
 * either case; the loopback goes direct (forwarded ports are there). None of the engines uses a
 * SOCKS proxy, so `ALL_PROXY` names the HTTP one too.
 */
export function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const direct = 'localhost,127.0.0.1,::1';
  return { HTTP_PROXY: url, HTTPS_PROXY: url, ALL_PROXY: url, http_proxy: url, https_proxy: url, all_proxy: url, NO_PROXY: direct, no_proxy: direct };
}

/** The upstream's path, which the engine's base URL carries too (`/v1`, or nothing). */
function upstreamPath(upstream: Upstream): string {
  return upstream.url.pathname === '/' ? '' : upstream.url.pathname;
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(key(item)) && seen.add(key(item)));
}
