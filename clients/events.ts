import { DaemonUnreachableError, type RpcClient } from '../rpc/client.js';
import type { JobEvent } from './wire.js';

/** `jobs/subscribe` params: one job (with a replay after `after_seq`), or every job. */
export interface SubscribeParams {
  job_id?: string;
  after_seq?: number;
}

/**
 * One subscription as an async stream of a job's events, in order; events that arrive while the
 * consumer is busy wait in a queue. Ends the subscription when the consumer stops; throws
 * DaemonUnreachableError when the daemon closes the connection.
 */
export async function* jobEvents(client: RpcClient, params: SubscribeParams): AsyncGenerator<JobEvent, void, undefined> {
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
  let subscription: string | undefined;
  try {
    subscription = (await client.request<{ subscription_id: string }>('jobs/subscribe', params)).subscription_id;
    for (;;) {
      const event = queue.shift();
      if (event !== undefined) yield event;
      else if (closed) throw new DaemonUnreachableError('the daemon closed the connection');
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    off();
    offClose();
    if (subscription !== undefined && !closed) void client.request('jobs/unsubscribe', { subscription_id: subscription }).catch(() => undefined);
  }
}
