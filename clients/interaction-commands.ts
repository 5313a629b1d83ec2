import { definedOnly, flagOpt, intOpt, stringOpt, UsageError } from './args.js';
import { arg, type Command } from './command.js';
import { json } from './format.js';
import type { HistoryView, PendingQuestion, PendingView, ReplyAnswer } from './wire.js';

/** `pending <job>`: jobs/pending; the question with its numbered options, or that the job is not waiting. */
export const pendingCommand: Command = {
  name: 'pending',
  usage: 'pending <job>',
  summary: 'show the question a waiting job asks, with its options numbered',
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const view = await ctx.client.request<PendingView>('jobs/pending', { job_id: arg(inv, 0) });
    const { pendingText, replyHint } = await interactionText();
    ctx.print(ctx.json ? json(view) : pendingText(view));
    if (!ctx.json && view.pending !== null) ctx.warn(`reply with: ${replyHint(view.job_id)}`);
    return 0;
  },
};

/** `reply <job> [--interaction N] [--json-response] [--key K] [--] <text...>`: jobs/reply. */
export const replyCommand: Command = {
  name: 'reply',
  usage: 'reply <job> [--interaction N] [--json-response] [--key K] [--] <text...>',
  summary: 'answer the pending question: the words joined by spaces (JSON with --json-response); a number picks that option, y or n answers an approval; -- ends the options',
  options: { interaction: { type: 'string' }, 'json-response': { type: 'boolean' }, key: { type: 'string' } },
  positionals: [2, Number.POSITIVE_INFINITY],
  run: async (ctx, inv) => {
    const jobId = arg(inv, 0);
    const text = inv.positionals.slice(1).join(' ');
    // A bad flag is a usage error before the daemon is asked anything.
    const fromJson = flagOpt(inv.values, 'json-response') ? { response: parseJsonValue(text) } : null;
    const given = intOpt(inv.values, 'interaction');
    const view = await ctx.client.request<PendingView>('jobs/pending', { job_id: jobId });
    const { pending } = view;
    const { notWaitingText, pickResponse } = await interactionText();
    // Without --interaction there must be a question to answer; with it, the daemon decides (a retry with --key is accepted again).
    if (given === undefined && pending === null) {
      ctx.warn(`skillctl: JOB_NOT_WAITING: ${notWaitingText(view)}`);
      return 1;
    }
    const interactionId = given ?? (pending as PendingQuestion).interaction_id;
    // The words are read as at the terminal prompt: an option's number, an approval's y or n.
    const picked = fromJson ?? (pending !== null && interactionId === pending.interaction_id ? pickResponse(text, pending) : { response: text });
    if ('refused' in picked) throw new UsageError(picked.refused);
    const { response } = picked;
    const params = definedOnly({ job_id: jobId, interaction_id: interactionId, response, idempotency_key: stringOpt(inv.values, 'key') });
    const answer = await ctx.client.request<ReplyAnswer>('jobs/reply', params);
    ctx.print(ctx.json ? json(answer) : `reply accepted; job ${answer.job_id} is ${answer.status}`);
    return 0;
  },
};

/** How questions, replies and histories read: loaded by the command that prints one. */
function interactionText(): Promise<typeof import('./interaction-text.js')> {
  return import('./interaction-text.js');
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
    const jobId = arg(inv, 0);
    const view = await ctx.client.request<HistoryView>('jobs/history', { job_id: jobId });
    // A long history comes in pages: all of them are read, and shown as one.
    for (let page = view; typeof page.next === 'number'; ) {
      page = await ctx.client.request<HistoryView>('jobs/history', { job_id: jobId, after: page.next });
      view.interactions.push(...page.interactions);
    }
    view.next = null;
    const { historyText } = await interactionText();
    if (ctx.json) ctx.print(json(view));
    else ctx.print(view.interactions.length === 0 ? `job ${view.job_id} has asked no questions` : historyText(view.interactions));
    return 0;
  },
};
