import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RpcClient } from '../../rpc/client.js';
import { definedOnly } from '../args.js';
import { jobEvents, standingEvent, statusTo, type SubscribeParams } from '../events.js';
import type { JobView, PendingView, ResultView, SkillView } from '../wire.js';
import type { CallExtra } from './call-extra.js';
import type { DaemonLink } from './daemon-link.js';
import { askPerson } from './elicit.js';
import { endResult, errorResult, failureResult, followUp, waitingResult, type WaitingView } from './results.js';

/** What one `tools/call` works with. */
export interface CallScope {
  readonly link: DaemonLink;
  readonly server: Server;
  readonly extra: CallExtra;
  /** True once the server is shutting down: a call it aborts leaves its job alone. */
  closing(): boolean;
}

/** Gemini CLI adds this argument to every tool it offers its model; it means nothing here. */
const CLIENT_ADDED_ARGS: readonly string[] = ['wait_for_previous'];

/** The arguments a call may carry, or the INVALID_PARAMS text for one it may not. */
export function checkArgs(args: Record<string, unknown>, allowed: readonly string[]): Record<string, unknown> | string {
  const kept = Object.fromEntries(Object.entries(args).filter(([key]) => !CLIENT_ADDED_ARGS.includes(key)));
  const unknown = Object.keys(kept).find((key) => !allowed.includes(key));
  return unknown === undefined ? kept : `INVALID_PARAMS: unknown argument "${unknown}"; the arguments are ${allowed.join(', ')}`;
}

/**
 * A skill's tool call: `jobs/create` with the call's arguments (the daemon checks them: its
 * refusal is the result), then the job is followed to its end, or to a question nobody answers here.
 */
export async function callSkill(scope: CallScope, skill: SkillView, args: Record<string, unknown>): Promise<CallToolResult> {
  const checked = checkArgs(args, ['input', 'parameter', 'engine', 'execution_mode']);
  if (typeof checked === 'string') return errorResult(checked);
  const params = definedOnly({
    skill_id: skill.id,
    // None named: the daemon's choice (its default_engine where the skill runs on it; the skill's only mode), as for every client.
    engine: checked['engine'],
    execution_mode: checked['execution_mode'],
    input: checked['input'] ?? {},
    parameter: checked['parameter'],
  });
  try {
    const client = await scope.link.client();
    const job = await client.request<JobView>('jobs/create', params);
    return await followJob(scope, client, job.job_id, 'start');
  } catch (error) {
    return failureResult(error, scope.link.socket);
  }
}

/**
 * Follows a job until it ends (its result) or waits on a question that is not answered here (the
 * waiting answer). Each status change is a progress notification when the caller sent a progress
 * token; cancelling the call cancels the job. `start` replays the job's events from its first.
 */
export async function followJob(scope: CallScope, client: RpcClient, jobId: string, from: 'start' | 'now'): Promise<CallToolResult> {
  const { extra } = scope;
  const cancel = (): void => {
    if (!scope.closing()) void client.request('jobs/cancel', { job_id: jobId }).catch(() => undefined);
  };
  extra.signal.addEventListener('abort', cancel, { once: true });
  if (extra.signal.aborted) cancel();
  const report = progressReporter(extra, jobId);
  const params: SubscribeParams = from === 'start' ? { job_id: jobId, after_seq: 0 } : { job_id: jobId };
  const afterSubscribe = from === 'now' ? async () => [standingEvent(await client.request<JobView>('jobs/get', { job_id: jobId }))] : undefined;
  let status: string | undefined;
  try {
    for await (const event of jobEvents(client, params, { signal: extra.signal, afterSubscribe })) {
      if (event.type === 'finished') return endResult(await client.request<ResultView>('jobs/result', { job_id: jobId }));
      const to = statusTo(event);
      if (to === undefined || to === status) continue;
      status = to;
      await report(to);
      if (to !== 'waiting_user') continue;
      const view = await client.request<PendingView>('jobs/pending', { job_id: jobId });
      if (view.pending === null) continue; // answered meanwhile
      const asked = await askPerson(scope.server, extra, client, view as WaitingView);
      if (!asked.answered) return waitingResult(view as WaitingView, asked.why);
    }
    // Only an aborted call gets here; the SDK sends no answer to it.
    return errorResult(`the call was cancelled; ${followUp(jobId)}`);
  } finally {
    extra.signal.removeEventListener('abort', cancel);
  }
}

/** Sends `notifications/progress` for each status, when the request carried a progress token. */
function progressReporter(extra: CallExtra, jobId: string): (status: string) => Promise<void> {
  const token = extra._meta?.progressToken;
  let progress = 0;
  return async (status) => {
    if (token === undefined) return;
    progress += 1;
    const params = { progressToken: token, progress, message: `job ${jobId} ${status}` };
    await extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}
