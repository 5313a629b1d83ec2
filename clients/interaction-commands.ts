import { definedOnly, flagOpt, intOpt, stringOpt, UsageError } from './args.js';
import { arg, type Command, type Context } from './command.js';
import { json } from './format.js';
import { historyText, notWaitingText, pendingText, replyHint } from './interaction-text.js';
import type { HistoryView, PendingView, ReplyAnswer } from './wire.js';

/** `pending <job>`: jobs/pending; the question with its numbered options, or that the job is not waiting. */
export const pendingCommand: Command = {
  name: 'pending',
  usage: 'pending <job>',
  summary: 'show the question a waiting job asks, with its options numbered',
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const view = await ctx.client.request<PendingView>('jobs/pending', { job_id: arg(inv, 0) });
    ctx.print(ctx.json ? json(view) : pendingText(view));
    if (!ctx.json && view.pending !== null) ctx.warn(`reply with: ${replyHint(view.job_id)}`);
    return 0;
  },
};

/** `reply <job> [--interaction N] [--json-response] [--key K] [--] <text...>`: jobs/reply. */
export const replyCommand: Command = {
  name: 'reply',
  usage: 'reply <job> [--interaction N] [--json-response] [--key K] [--] <text...>',
  summary: 'answer the pending question: the words joined by spaces (JSON with --json-response); -- ends the options',
  options: { interaction: { type: 'string' }, 'json-response': { type: 'boolean' }, key: { type: 'string' } },
  positionals: [2, Number.POSITIVE_INFINITY],
  run: async (ctx, inv) => {
    const jobId = arg(inv, 0);
    const text = inv.positionals.slice(1).join(' ');
    const response = flagOpt(inv.values, 'json-response') ? parseJsonValue(text) : text;
    const interactionId = intOpt(inv.values, 'interaction') ?? (await pendingInteraction(ctx, jobId));
    if (interactionId === null) return 1;
    const params = definedOnly({ job_id: jobId, interaction_id: interactionId, response, idempotency_key: stringOpt(inv.values, 'key') });
    const answer = await ctx.client.request<ReplyAnswer>('jobs/reply', params);
    ctx.print(ctx.json ? json(answer) : `reply accepted; job ${answer.job_id} is ${answer.status}`);
    return 0;
  },
};

/** The pending interaction's id, or null (after saying JOB_NOT_WAITING on stderr) when there is none. */
async function pendingInteraction(ctx: Context, jobId: string): Promise<number | null> {
  const view = await ctx.client.request<PendingView>('jobs/pending', { job_id: jobId });
  if (view.pending !== null) return view.pending.interaction_id;
  ctx.warn(`skillctl: JOB_NOT_WAITING: ${notWaitingText(view)}`);
  return null;
}

function parseJsonValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--json-response: the reply is not valid JSON: ${(error as Error).message}`);
  }
}

/** `history <job>`: jobs/history, one block per ask/reply round. */
export const historyCommand: Command = {
  name: 'history',
  usage: 'history <job>',
  summary: "list a job's ask/reply rounds: id, times, prompt, response, resolution mode",
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const view = await ctx.client.request<HistoryView>('jobs/history', { job_id: arg(inv, 0) });
    if (ctx.json) ctx.print(json(view));
    else ctx.print(view.interactions.length === 0 ? `job ${view.job_id} has asked no questions` : historyText(view.interactions));
    return 0;
  },
};
