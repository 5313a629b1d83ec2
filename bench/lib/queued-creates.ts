import type { RpcClient } from '../../rpc/client.js';
import type { BenchDaemon } from './daemon.js';
import { EventHub } from './events.js';
import type { Job } from './fixtures.js';

/** The job whose jobs/create the history benchmarks time. */
export const ECHO_JOB = { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } };

/**
 * Holds a one-slot daemon's slot with a job that hangs, so that every job created after stays
 * queued (no engine starts to disturb the measurement). Returns a client of the daemon.
 */
export async function holdTheSlot(daemon: BenchDaemon): Promise<RpcClient> {
  const client = await daemon.client();
  const hub = await EventHub.attach(await daemon.client());
  const blocker = await client.request<Job>('jobs/create', { ...ECHO_JOB, input: { scenario: 'hang' } });
  await hub.waitStatus(blocker.job_id, ['running']);
  return client;
}

/** One jobs/create, its time pushed to `into`; then the job is canceled (untimed), so the active state stays the same size. */
export async function timedCreate(client: RpcClient, into: number[]): Promise<string> {
  const started = performance.now();
  const job = await client.request<Job>('jobs/create', ECHO_JOB);
  into.push(performance.now() - started);
  await client.request('jobs/cancel', { job_id: job.job_id });
  return job.job_id;
}
