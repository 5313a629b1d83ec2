import { DaemonUnreachableError, type RpcClient } from '../rpc/client.js';
import type { Context } from './command.js';
import { TERMINAL_STATUSES, type JobEvent, type JobView } from './wire.js';

/** `jobs/subscribe` params: one job (with a replay after `after_seq`), or every job. */
export interface SubscribeParams {
  job_id?: string;
  after_seq?: number;
}

/** How a stream of events may be steered from outside. */
export interface StreamOptions {
  /** Ends the stream (the generator returns) when aborted, even while it waits for an event. */
  signal?: AbortSignal;
  /** Runs once the subscription stands; the events it gives come first, before any live one. */
  afterSubscribe?: (() => Promise<JobEvent[]>) | undefined;
  /**
   * Runs each time a subscription stands: the first, and each one made again after a restart
   * (`lastingJobEvents`). From then on no event is missed, so state read after it is never older
   * than the events that follow.
   */
  subscribed?: (() => void) | undefined;
}

/**
 * One subscription as an async stream of a job's events, in order; events that arrive while the
 * consumer is busy wait in a queue. Ends the subscription when the consumer stops or the signal
 * aborts; throws DaemonUnreachableError when the daemon closes the connection.
 */
export async function* jobEvents(client: RpcClient, params: SubscribeParams, options: StreamOptions = {}): AsyncGenerator<JobEvent, void, undefined> {
  const { signal } = options;
  const queue: JobEvent[] = [];
  let closed = false;
  let wake = (): void => undefined;
  const off = client.on('job/event', (raw) => {
    const event = raw as JobEvent;
    if (params.job_id !== undefined && event.job_id !== params.job_id) return;
    queue.push(event);
    wake();
  });
  const offClose = client.onClose(() => {
    closed = true;
    wake();
  });
  const onAbort = (): void => wake();
  signal?.addEventListener('abort', onAbort);
  let subscription: string | undefined;
  try {
    subscription = (await client.request<{ subscription_id: string }>('jobs/subscribe', params)).subscription_id;
    options.subscribed?.();
    if (options.afterSubscribe !== undefined) queue.unshift(...(await options.afterSubscribe()));
    for (;;) {
      if (signal?.aborted === true) return;
      const event = queue.shift();
      if (event !== undefined) yield event;
      else if (closed) throw new DaemonUnreachableError('the daemon closed the connection');
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    off();
    offClose();
    signal?.removeEventListener('abort', onAbort);
    if (subscription !== undefined && !closed) void client.request('jobs/unsubscribe', { subscription_id: subscription }).catch(() => undefined);
  }
}

/**
 * `jobEvents` that outlives a restart of the daemon: when the connection drops, it says so on
 * stderr, connects again (`Context.reconnect`) and subscribes again, a job's events from the last
 * one it gave (`after_seq`), so none is lost or given twice; without a job, the live stream goes on
 * (what happened meanwhile is not given). Ends when the signal aborts, also while it waits.
 */
export async function* lastingJobEvents(ctx: Pick<Context, 'client' | 'warn' | 'reconnect'>, params: SubscribeParams, options: StreamOptions = {}): AsyncGenerator<JobEvent, void, undefined> {
  let after = params.after_seq;
  for (let first = true; ; first = false) {
    // Once it has given an event of the job, the replay from there covers what the first subscription's start did.
    const again = params.job_id !== undefined && after !== undefined;
    const current: SubscribeParams = again && after !== undefined ? { ...params, after_seq: after } : params;
    try {
      const { afterSubscribe: _covered, ...replayed } = options;
      for await (const event of jobEvents(ctx.client, current, first || !again ? options : replayed)) {
        // A job's stored events are numbered from 1; the standing event a start gives is 0.
        if (event.seq > 0) after = event.seq;
        yield event;
      }
      return;
    } catch (error) {
      if (!(error instanceof DaemonUnreachableError)) throw error;
      if (!(await comeBack(ctx, options.signal))) return;
      if (params.job_id === undefined) ctx.warn('skillctl: (the events of the time between are not shown)');
    }
  }
}

/** `Context.reconnect`, saying on stderr (through the context: a status line is kept) that the daemon went away and is back. */
export async function comeBack(ctx: Pick<Context, 'warn' | 'reconnect'>, signal?: AbortSignal): Promise<boolean> {
  ctx.warn('skillctl: the daemon went away (a restart?): connecting again...');
  const back = await ctx.reconnect(signal);
  if (back) ctx.warn('skillctl: connected again');
  return back;
}

/** The status a `status_changed` event moves to; undefined for any other event. */
export function statusTo(event: JobEvent): string | undefined {
  const data = event.data as { to?: unknown } | null;
  return event.type === 'status_changed' && typeof data?.to === 'string' ? data.to : undefined;
}

/** The job as it stands, as a first event to follow from: `finished` for a job that has ended, else a `status_changed` to its status. */
export function standingEvent(job: JobView): JobEvent {
  const type = TERMINAL_STATUSES.includes(job.status) ? 'finished' : 'status_changed';
  return { job_id: job.job_id, seq: 0, ts: job.created_at, type, data: { from: null, to: job.status } };
}
