import type { RpcClient } from '../../rpc/client.js';

/** The fields of a job a waiter looks at. */
export interface JobState {
  job_id: string;
  status: string;
  pending_interaction_id: number | null;
}

const TERMINAL = ['succeeded', 'failed', 'canceled'];

/**
 * Waits, by subscription, for the job's next stop after a reply to interaction `after`: a new
 * question (waiting on a later interaction) or its end. This is what a script does between
 * `skillctl reply` and `skillctl pending` or `skillctl result`; `after` 0 waits for the first stop.
 */
export async function nextStop(client: RpcClient, jobId: string, after: number): Promise<JobState> {
  let found: (job: JobState) => void = () => undefined;
  const reached = new Promise<JobState>((resolve) => (found = resolve));
  const check = async (): Promise<void> => {
    const job = await client.request<JobState>('jobs/get', { job_id: jobId });
    if (TERMINAL.includes(job.status) || (job.status === 'waiting_user' && (job.pending_interaction_id ?? 0) > after)) found(job);
  };
  const off = client.on('job/event', (params) => {
    const event = params as { job_id: string; type: string };
    if (event.job_id === jobId && (event.type === 'status_changed' || event.type === 'finished')) void check().catch(() => undefined);
  });
  let offClose = (): void => undefined;
  const closed = new Promise<never>((_, reject) => (offClose = client.onClose((error) => reject(error))));
  closed.catch(() => undefined); // only raced below; a close after the stop is no error
  try {
    const { subscription_id } = await client.request<{ subscription_id: string }>('jobs/subscribe', { job_id: jobId });
    await check();
    const job = await Promise.race([reached, closed]);
    await client.request('jobs/unsubscribe', { subscription_id }).catch(() => undefined);
    return job;
  } finally {
    off();
    offClose();
  }
}

/** The newest job of a skill, or null. */
export async function newestJob(client: RpcClient, skillId: string): Promise<JobState | null> {
  const { jobs } = await client.request<{ jobs: JobState[] }>('jobs/list', { skill_id: skillId, limit: 1 });
  return jobs[0] ?? null;
}
