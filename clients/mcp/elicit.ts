import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/sdk/types.js';
import { DaemonUnreachableError, RpcCallError, type RpcClient } from '../../rpc/client.js';
import { APPROVAL_KIND } from '../interaction-text.js';
import type { JobEvent, PendingQuestion, PendingView } from '../wire.js';
import type { CallExtra } from './call-extra.js';
import type { WaitingView } from './results.js';

/** A person may take long to answer; the question is withdrawn earlier when the call ends or the job moves on. */
const ELICITATION_TIMEOUT_MS = 24 * 3600 * 1000;

/** A form for one pending question, and how its answer becomes the reply. */
export interface Form {
  params: ElicitRequestFormParams;
  response(content: Record<string, unknown>): unknown;
}

/**
 * The form that fits a question's kind: an approval is allow/deny, a question with options is a
 * single choice among their labels (answered with the option's value), `confirm` is yes/no, and
 * anything else is free text, sent verbatim.
 */
export function formFor(pending: PendingQuestion): Form {
  const message = pending.prompt;
  if (pending.kind === APPROVAL_KIND) return choice(message, 'Decision', ['allow', 'deny'], (picked) => picked);
  const options = pending.options ?? [];
  if (options.length > 0) {
    const labels = uniqueLabels(options.map((option) => option.label));
    return choice(message, 'Choice', labels, (picked) => {
      const option = options[labels.indexOf(picked)];
      return option === undefined || option.value === undefined ? picked : option.value;
    });
  }
  if (pending.kind === 'confirm') return choice(message, 'Answer', ['yes', 'no'], (picked) => picked);
  return {
    params: { message, requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: 'Answer', minLength: 1 } }, required: ['answer'] } },
    response: (content) => content['answer'],
  };
}

function choice(message: string, title: string, values: string[], toResponse: (picked: string) => unknown): Form {
  return {
    params: { message, requestedSchema: { type: 'object', properties: { choice: { type: 'string', title, enum: values } }, required: ['choice'] } },
    response: (content) => toResponse(String(content['choice'])),
  };
}

/** Labels as choices must differ: a repeated one gets its position added. */
function uniqueLabels(labels: string[]): string[] {
  return labels.map((label, index) => (labels.indexOf(label) === index ? label : `${label} (${index + 1})`));
}

/** What asking came to: the question was answered (here or elsewhere), or it still waits, and why. */
export type Asked = { answered: true } | { answered: false; why: string };

/**
 * Puts a waiting job's question to the client's user (`elicitation/create`) and sends the answer
 * with `jobs/reply`, verbatim. The question is withdrawn when the call is cancelled or the job
 * moves on without it (answered elsewhere, canceled, timed out).
 */
export async function askPerson(server: Server, extra: CallExtra, client: RpcClient, view: WaitingView): Promise<Asked> {
  if (server.getClientCapabilities()?.elicitation?.form === undefined) return { answered: false, why: 'this client cannot put questions to its user' };
  const form = formFor(view.pending);
  const withdraw = new AbortController();
  const onAbort = (): void => withdraw.abort();
  extra.signal.addEventListener('abort', onAbort);
  // A status change may be an old one replayed: only a question that is no longer pending is withdrawn.
  const off = client.on('job/event', (raw) => {
    const event = raw as JobEvent;
    if (event.job_id !== view.job_id || event.type !== 'status_changed') return;
    void client.request<PendingView>('jobs/pending', { job_id: view.job_id }).then(
      (now) => now.pending?.interaction_id !== view.pending.interaction_id && withdraw.abort(),
      () => withdraw.abort(),
    );
  });
  try {
    const result = await server.elicitInput(form.params, { signal: withdraw.signal, timeout: ELICITATION_TIMEOUT_MS, relatedRequestId: extra.requestId });
    if (result.action !== 'accept') return { answered: false, why: `the user chose to ${result.action === 'decline' ? 'decline' : 'cancel'} the question` };
    const response = form.response(result.content ?? {});
    await client.request('jobs/reply', { job_id: view.job_id, interaction_id: view.pending.interaction_id, response });
    return { answered: true };
  } catch (error) {
    if (withdraw.signal.aborted) return { answered: true }; // moved on, or the call ended: the caller reads where the job stands
    if (error instanceof RpcCallError && ['JOB_NOT_WAITING', 'INTERACTION_STALE'].includes(error.dataCode)) return { answered: true };
    if (error instanceof RpcCallError) return { answered: false, why: `the reply was refused: ${error.dataCode}: ${error.message}` };
    if (error instanceof DaemonUnreachableError || !(error instanceof Error)) throw error;
    return { answered: false, why: `the question could not be put: ${error.message}` };
  } finally {
    off();
    extra.signal.removeEventListener('abort', onAbort);
  }
}
