import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { DaemonUnreachableError, RpcCallError } from '../../rpc/client.js';
import { questionText, replyHint } from '../interaction-text.js';
import type { PendingQuestion, ResultView } from '../wire.js';
import { artifactName, artifactUri, resultUri } from './uris.js';
import { isObject, JOB_TOOL, REPLY_TOOL } from './tools.js';

/** A waiting job's question, as the waiting answer carries it. */
export interface WaitingView {
  job_id: string;
  status: string;
  pending: PendingQuestion;
}

/**
 * What a call returns once its job has ended: the validated output as `structuredContent` and as
 * JSON text, with a link to each artifact; a job that failed or was canceled is an `isError`
 * result naming its stable code.
 */
export function endResult(result: ResultView): CallToolResult {
  if (result.status !== 'succeeded') {
    const why = result.error === null ? '' : `${result.error.code}: ${result.error.message}\n`;
    return errorResult(`${why}job ${result.job_id} ${result.status}; ${followUp(result.job_id)}`);
  }
  const links: ContentBlock[] = result.artifacts.map((path) => {
    const name = artifactName(result.job_id, path);
    return { type: 'resource_link', uri: artifactUri(result.job_id, name), name };
  });
  const self: ContentBlock = { type: 'resource_link', uri: resultUri(result.job_id), name: `${result.job_id}/result`, mimeType: 'application/json' };
  const content: ContentBlock[] = [{ type: 'text', text: JSON.stringify(result.output) }, self, ...links];
  return isObject(result.output) ? { content, structuredContent: result.output } : { content };
}

/**
 * The waiting answer: the job waits for a reply nobody gave here (the client cannot ask, or the
 * person declined). Not an error: the job goes on as soon as someone answers.
 */
export function waitingResult(view: WaitingView, why: string): CallToolResult {
  const answer = { job_id: view.job_id, status: view.status, pending: view.pending };
  return { content: [{ type: 'text', text: JSON.stringify(answer) }, { type: 'text', text: howToAnswer(view, why) }], structuredContent: answer };
}

/** What a waiting job asks and the ways to answer it. */
export function howToAnswer(view: WaitingView, why: string): string {
  return (
    `The job waits for an answer (${why}). Question: ${questionText(view.pending)}\n` +
    `Answer with the ${REPLY_TOOL} tool (job_id "${view.job_id}", response: the answer; for options, the option's value), ` +
    `or from a shell: ${replyHint(view.job_id)}. ${JOB_TOOL} shows where the job stands.`
  );
}

/** A refusal or failure as a tool result the model can read: the daemon's stable code and message, or that it cannot be reached. */
export function failureResult(error: unknown, socket: string): CallToolResult {
  if (error instanceof RpcCallError) {
    const details = error.details === undefined ? '' : `\ndetails: ${JSON.stringify(error.details)}`;
    return errorResult(`${error.dataCode}: ${error.message}${details}`);
  }
  if (error instanceof DaemonUnreachableError) {
    return errorResult(`cannot reach the skilld daemon at ${socket}: ${error.message}; its jobs keep their state there`);
  }
  throw error;
}

/** A result with `isError`, its text as the only content. */
export function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Where to look at a job afterwards. */
export function followUp(jobId: string): string {
  return `${JOB_TOOL} or the resource ${resultUri(jobId)} shows it`;
}
