import { cursorAfter, type JobEventRecord, type JobEvents } from '../../daemon/model/events.js';
import type { RpcClient } from '../../rpc/client.js';

/** Every stored event of a job after `afterSeq`, read a page of `pageBytes` at a time as a follower reads them. */
export async function storedEvents(events: JobEvents, jobId: string, afterSeq = 0, pageBytes = 1024): Promise<JobEventRecord[]> {
  const all: JobEventRecord[] = [];
  let cursor = cursorAfter(afterSeq);
  for (let end = false; !end; ) {
    const page = await events.read(jobId, cursor, pageBytes);
    all.push(...page.events);
    ({ cursor, end } = page);
  }
  return all;
}

/** One `job/event` notification, as a test reads it. */
export interface EventSeen {
  job_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** Every event of a job from the start, through a subscription with replay, until it is finished. */
export async function replayOf(client: RpcClient, jobId: string): Promise<EventSeen[]> {
  const events: EventSeen[] = [];
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const off = client.on('job/event', (params) => {
    const event = params as EventSeen;
    if (event.job_id !== jobId) return;
    events.push(event);
    if (event.type === 'finished') done();
  });
  const { subscription_id } = await client.request<{ subscription_id: string }>('jobs/subscribe', { job_id: jobId, after_seq: 0 });
  await finished;
  off();
  await client.request('jobs/unsubscribe', { subscription_id });
  return events;
}
