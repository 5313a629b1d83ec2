import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { notWaitingText } from '../interaction-text.js';
import { TERMINAL_STATUSES, type JobView, type PendingView, type ResultView } from '../wire.js';
import { checkArgs, followJob, type CallScope } from './call.js';
import { errorResult, failureResult, howToAnswer, type WaitingView } from './results.js';
import { artifactName, artifactUri, resultUri } from './uris.js';

/**
 * `skilld_reply`: answers the question a job waits on (`jobs/reply`, the response verbatim), then
 * follows the job as the skill's tool does: to its end, or to its next question.
 */
export async function replyTool(scope: CallScope, args: Record<string, unknown>): Promise<CallToolResult> {
  const checked = checkArgs(args, ['job_id', 'response', 'interaction_id']);
  if (typeof checked === 'string') return errorResult(checked);
  const jobId = checked['job_id'];
  if (typeof jobId !== 'string' || !('response' in checked)) return errorResult('INVALID_PARAMS: job_id (a string) and response are required');
  try {
    const client = await scope.link.client();
    let interaction = checked['interaction_id'];
    if (interaction === undefined) {
      const view = await client.request<PendingView>('jobs/pending', { job_id: jobId });
      if (view.pending === null) return errorResult(`JOB_NOT_WAITING: ${notWaitingText(view)}`);
      interaction = view.pending.interaction_id;
    }
    await client.request('jobs/reply', { job_id: jobId, interaction_id: interaction, response: checked['response'] });
    return await followJob(scope, client, jobId, 'now');
  } catch (error) {
    return failureResult(error, scope.link.socket);
  }
}

/** `skilld_job`: where a job stands: its status, its question, its output or error once it has ended. Does not wait. */
export async function jobTool(scope: CallScope, args: Record<string, unknown>): Promise<CallToolResult> {
  const checked = checkArgs(args, ['job_id']);
  if (typeof checked === 'string') return errorResult(checked);
  const jobId = checked['job_id'];
  if (typeof jobId !== 'string') return errorResult('INVALID_PARAMS: job_id (a string) is required');
  try {
    const client = await scope.link.client();
    const job = await client.request<JobView>('jobs/get', { job_id: jobId });
    const waiting = job.status === 'waiting_user' ? await client.request<PendingView>('jobs/pending', { job_id: jobId }) : null;
    const ended = TERMINAL_STATUSES.includes(job.status) ? await client.request<ResultView>('jobs/result', { job_id: jobId }) : null;
    const answer = {
      job_id: jobId,
      skill_id: job.skill_id,
      status: waiting?.status ?? job.status,
      pending: waiting?.pending ?? null,
      output: ended?.output ?? null,
      error: ended?.error ?? job.error,
      result: resultUri(jobId),
      artifacts: (ended?.artifacts ?? []).map((path) => artifactUri(jobId, artifactName(jobId, path))),
    };
    const hint: ContentBlock[] = waiting === null || waiting.pending === null ? [] : [{ type: 'text', text: howToAnswer(waiting as WaitingView, 'nobody has answered yet') }];
    return { content: [{ type: 'text', text: JSON.stringify(answer) }, ...hint], structuredContent: answer };
  } catch (error) {
    return failureResult(error, scope.link.socket);
  }
}
