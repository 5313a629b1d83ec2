import { setTimeout as delay } from 'node:timers/promises';
import { DaemonUnreachableError, RpcCallError, RpcClient } from '../../rpc/client.js';
import { MAX_REQUESTS_IN_FLIGHT } from '../../rpc/connection.js';
import { Limiter } from '../../rpc/limiter.js';
import { lastingJobEvents, type SubscribeParams } from '../events.js';
import { ClientLink, RECONNECT_EVERY_MS } from '../link.js';
import type { JobEvent } from '../wire.js';
import { Feed, type SendEvent } from './feed.js';

/**
 * The methods the page may call through `POST /rpc`: reading jobs and skills, answering, starting,
 * canceling and retrying jobs. Stopping the daemon and removing jobs are left to skillctl; events
 * come through `GET /events`, artifacts through `GET /artifact`.
 */
export const PAGE_METHODS: ReadonlySet<string> = new Set([
  'daemon/status',
  'daemon/hosts',
  'engines/list',
  'skills/list',
  'skills/get',
  'jobs/list',
  'jobs/get',
  'jobs/pending',
  'jobs/history',
  'jobs/result',
  'jobs/logs',
  'jobs/reply',
  'jobs/create',
  'jobs/cancel',
  'jobs/retry',
]);

/** What the page gets for one call: the daemon's result, or its error with the stable code. */
export type CallAnswer = { result: unknown } | { error: { code: string; message: string; details?: unknown } };

/**
 * The most job views whose events the page server follows at once, each over a daemon connection
 * of its own: with the calls' and the lists' connections, at most 18 of the daemon's
 * `max_connections` (64), however many tabs are open. One more is refused (`TOO_MANY_STREAMS`).
 */
export const MAX_JOB_STREAMS = 16;

/**
 * The calls the page server has out to the daemon at once over their one shared connection: as
 * many as the daemon runs of one connection at once (`MAX_REQUESTS_IN_FLIGHT`, 16). More would be
 * no faster (the daemon stops reading the connection past them) and would let answers pile up
 * unread on the daemon's side while the page server is busy, and past 16 MiB unsent
 * (`MAX_CONNECTION_BACKLOG_BYTES`) the daemon closes the connection, failing every call on it.
 * Each answer is read before the next call goes out, so at most 16 of them ever wait.
 */
export const MAX_CALLS_IN_FLIGHT = MAX_REQUESTS_IN_FLIGHT;

/**
 * The calls that wait for their turn beyond those in flight; one more is answered `BUSY` at once.
 * A view makes a few calls as it opens, so this lets about twenty tabs read their state again at
 * once (as they do when the daemon is back) while a burst beyond that is refused, not held.
 */
export const MAX_CALLS_WAITING = 64;

/**
 * The page's way to the daemon: calls share one connection, made again when the daemon restarts;
 * every open list shares one stream of every job's changes, and each job view has a stream of its
 * own (it starts from the job's first event); streams follow the daemon through restarts.
 */
export class Bridge {
  readonly #socket: string;
  readonly #everyJob = new Feed((send, signal) => this.#follow({}, send, signal));
  readonly #calls = new Limiter(MAX_CALLS_IN_FLIGHT);
  #client: Promise<RpcClient> | null = null;
  #closed = false;
  #jobStreams = 0;

  constructor(socket: string) {
    this.#socket = socket;
  }

  /**
   * One call of the page, if it is one the page may make: `BUSY` when MAX_CALLS_IN_FLIGHT calls
   * are out and MAX_CALLS_WAITING wait (it never reached the daemon: sending it again is safe);
   * the daemon being away is `DAEMON_UNREACHABLE`.
   */
  async call(method: string, params: unknown): Promise<CallAnswer> {
    if (!PAGE_METHODS.has(method)) return { error: { code: 'METHOD_NOT_ALLOWED', message: `the page does not call ${method}` } };
    return this.request(method, params);
  }

  /**
   * One call of the server's own (any method), answered as `call` answers. `turn: 'always'` waits
   * for its turn however many wait, for work already under way (a download's next chunk, once its
   * headers are sent); it is never `BUSY`.
   */
  request(method: string, params: unknown, turn: 'bounded' | 'always' = 'bounded'): Promise<CallAnswer> {
    // Counted and queued in this same turn of the event loop: no other call can slip in between.
    if (turn === 'bounded' && this.#calls.running >= MAX_CALLS_IN_FLIGHT && this.#calls.waiting >= MAX_CALLS_WAITING) {
      const message = `the page server has ${MAX_CALLS_IN_FLIGHT} calls out to the daemon and ${MAX_CALLS_WAITING} waiting; try again shortly`;
      return Promise.resolve({ error: { code: 'BUSY', message } });
    }
    return this.#calls.run(() => this.#send(method, params));
  }

  /** One call over the shared connection, made again once if the daemon closed it (a restart). */
  async #send(method: string, params: unknown): Promise<CallAnswer> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const client = await this.#connected();
        return { result: await client.request(method, params) };
      } catch (error) {
        if (error instanceof RpcCallError) return { error: { code: error.dataCode, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) } };
        if (!(error instanceof DaemonUnreachableError)) throw error;
        // A connection the daemon closed when it restarted: one fresh try.
        if (attempt > 0) return { error: { code: 'DAEMON_UNREACHABLE', message: `cannot reach the daemon at ${this.#socket}: ${error.message}` } };
      }
    }
  }

  /**
   * Sends a job's events (`job_id`, from `after_seq`), or every job's and the skills' changes, until
   * `signal` aborts. The daemon's comings and goings are events too (`daemon` `{connected}`); while
   * it is away the stream waits for it, and a job's stream goes on where it stopped. `connected:
   * true` comes once the subscription stands, not when the connection is made: a view that reads
   * its state on it misses no change between that reading and its stream.
   */
  async stream(params: SubscribeParams, send: SendEvent, signal: AbortSignal): Promise<void> {
    if (params.job_id === undefined) return this.#everyJob.follow(send, signal);
    if (this.#jobStreams >= MAX_JOB_STREAMS) {
      send('failure', { code: 'TOO_MANY_STREAMS', message: `the page follows at most ${MAX_JOB_STREAMS} jobs at once: close another job's view, then reload this one` });
      return;
    }
    this.#jobStreams += 1;
    try {
      await this.#follow(params, send, signal);
    } finally {
      this.#jobStreams -= 1;
    }
  }

  /** One subscription over a connection of its own, as `stream` describes. */
  async #follow(params: SubscribeParams, send: SendEvent, signal: AbortSignal): Promise<void> {
    const link = await this.#link(send, signal);
    if (link === null) return;
    const skills = (): void => void link.client.on('skills/changed', (changed) => send('skills', changed));
    if (params.job_id === undefined) skills();
    const reconnect = async (abort?: AbortSignal): Promise<boolean> => {
      send('daemon', { connected: false });
      if (!(await lasting(link, abort))) return false;
      if (params.job_id === undefined) skills();
      return true;
    };
    // Connected for the page once the subscription stands (again, after a restart): from then on it hears every change.
    const subscribed = (): void => send('daemon', { connected: true });
    try {
      for await (const event of lastingJobEvents({ client: link.client, warn: () => undefined, reconnect }, params, { signal, subscribed })) {
        if (!forPage(event, params.job_id === undefined)) continue;
        send('job', event, params.job_id === undefined ? undefined : event.seq);
      }
    } catch (error) {
      if (!(error instanceof RpcCallError)) throw error;
      send('failure', { code: error.dataCode, message: error.message });
    } finally {
      link.close();
    }
  }

  /** Closes the calls' connection for good: a call still on its way is answered `DAEMON_UNREACHABLE`, never sent over a new one. */
  close(): void {
    this.#closed = true;
    void this.#client?.then((client) => client.close(), () => undefined);
    this.#client = null;
  }

  /** The shared connection, made when there is none; forgotten when it closes. */
  #connected(): Promise<RpcClient> {
    // A connection made after close would hold the stopped page server's process open.
    if (this.#closed) return Promise.reject(new DaemonUnreachableError('the page server is stopping'));
    if (this.#client !== null) return this.#client;
    const made = RpcClient.connect(this.#socket);
    const forget = (): void => {
      if (this.#client === made) this.#client = null;
    };
    this.#client = made;
    made.then((client) => client.onClose(forget), forget);
    return made;
  }

  /** A connection of a stream's own: waits for the daemon (saying it is away) until it answers, or null once `signal` aborts. */
  async #link(send: SendEvent, signal: AbortSignal): Promise<ClientLink | null> {
    for (let said = false; !signal.aborted; said = true) {
      try {
        const client = await RpcClient.connect(this.#socket);
        if (signal.aborted) {
          client.close();
          return null;
        }
        return new ClientLink(client, this.#socket);
      } catch (error) {
        if (!(error instanceof DaemonUnreachableError)) throw error;
        if (!said) send('daemon', { connected: false });
        await delay(RECONNECT_EVERY_MS, undefined, { signal }).catch(() => undefined);
      }
    }
    return null;
  }
}

/**
 * Whether the page uses an event: never the engine's raw lines (`output`: the page shows the
 * agent's words, `message`), and in the list of every job only status changes. A busy engine's
 * output would otherwise keep every open page at work for nothing.
 */
function forPage(event: JobEvent, everyJob: boolean): boolean {
  return everyJob ? event.type === 'status_changed' : event.type !== 'output';
}

/** `ClientLink.reconnect` for as long as the page is open: a daemon away for longer than a command waits is waited for still. */
async function lasting(link: ClientLink, signal?: AbortSignal): Promise<boolean> {
  for (;;) {
    try {
      return await link.reconnect(signal);
    } catch (error) {
      if (!(error instanceof DaemonUnreachableError)) throw error;
    }
  }
}
