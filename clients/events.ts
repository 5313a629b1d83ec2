import { DaemonUnreachableError, type RpcClient } from '../rpc/client.js';
import type { JobEvent } from './wire.js';

/** `jobs/subscribe` params: one job (with a replay after `after_seq`), or every job. */
export interface SubscribeParams {
  job_id?: string;
  after_seq?: number;
}

/**
 * Subscribes and hands each `job/event` to `onEvent` until it returns true, then resolves with
 * that event. Rejects with DaemonUnreachableError when the daemon closes the connection first.
 */
export function followEvents(client: RpcClient, params: SubscribeParams, onEvent: (event: JobEvent) => boolean): Promise<JobEvent> {
  return new Promise((resolve, reject) => {
    const off = client.on('job/event', (raw) => {
      const event = raw as JobEvent;
      if (params.job_id !== undefined && event.job_id !== params.job_id) return;
      if (onEvent(event)) finish(() => resolve(event));
    });
    let offClose = (): void => undefined;
    const finish = (settle: () => void): void => {
      off();
      offClose();
      settle();
    };
    offClose = client.onClose(() => finish(() => reject(new DaemonUnreachableError('the daemon closed the connection'))));
    client.request('jobs/subscribe', params).catch((error: unknown) => finish(() => reject(error as Error)));
  });
}
