import { definedOnly, intOpt, UsageError } from './args.js';
import { arg, type Command } from './command.js';
import { cell, json, table } from './format.js';
import { agoOf, durationText } from './time-text.js';

/** One try of a webhook delivery, as `notify/log` answers it (docs/protocol.md, "notify/log"). */
export interface NotifyAttemptView {
  delivery_id: string;
  url: string;
  event: string;
  job_id: string;
  attempt: number;
  at: string;
  status: number | null;
  error: string | null;
  next_at: string | null;
  outcome: 'delivered' | 'retrying' | 'given_up';
}

/** `notify log [-n N]`: notify/log as a table, oldest first, the latest at the bottom as `tail` has it. */
export const notifyCommand: Command = {
  name: 'notify',
  usage: 'notify log [-n|--limit N]',
  summary: 'show the last tries to deliver webhook notifications (the config\'s notify): the answer of each, and when the next comes or that it was given up',
  options: {
    limit: { type: 'string', short: 'n', value: 'N', description: 'the last N tries (1 to 200)', default: '20' },
  },
  positionals: [1, 1],
  argChoices: ['log'],
  examples: ['notify log', 'notify log -n 50', 'notify log --json'],
  details: [
    'Each row is one try of one delivery: TRY counts them (the delivery id, sent as X-Skilld-Delivery, stays the same), ANSWER is the receiver\'s ' +
      'HTTP status or why there was none (a redirect is not followed and counts as a failure), NEXT when the next try comes (retried: a row below ' +
      'is that try), or that it was delivered or given up. URLs are shown without their user, password and query (docs/notify.md).',
  ],
  run: async (ctx, inv) => {
    if (arg(inv, 0) !== 'log') throw new UsageError(`unknown notify verb "${arg(inv, 0)}" (there is: log)`);
    const answer = await ctx.client.request<{ attempts: NotifyAttemptView[] }>('notify/log', definedOnly({ limit: intOpt(inv.values, 'limit') }));
    if (ctx.json) ctx.print(json(answer));
    else ctx.print(answer.attempts.length === 0 ? 'no notification tried yet' : attemptTable(answer.attempts, Date.now()));
    return 0;
  },
};

/** The tries as a table; `now` makes the ages and the waits. */
export function attemptTable(attempts: readonly NotifyAttemptView[], now: number): string {
  const tried = new Set(attempts.map((a) => `${a.delivery_id} ${a.attempt}`));
  const rows = attempts.map((a) => {
    const retried = tried.has(`${a.delivery_id} ${a.attempt + 1}`);
    return [agoOf(a.at, now), cell(a.event), cell(a.job_id), String(a.attempt), answerText(a), retried ? 'retried' : nextText(a, now), cell(a.delivery_id), cell(a.url)];
  });
  return table(['WHEN', 'EVENT', 'JOB', 'TRY', 'ANSWER', 'NEXT', 'DELIVERY', 'URL'], rows);
}

function answerText(attempt: NotifyAttemptView): string {
  if (attempt.status === null) return cell(attempt.error);
  return attempt.status >= 300 && attempt.status < 400 ? `HTTP ${attempt.status} (redirect, not followed)` : `HTTP ${attempt.status}`;
}

function nextText(attempt: NotifyAttemptView, now: number): string {
  if (attempt.outcome === 'delivered') return 'delivered';
  if (attempt.outcome === 'given_up' || attempt.next_at === null) return 'given up';
  const wait = Date.parse(attempt.next_at) - now;
  return wait > 0 ? `retry in ${durationText(wait)}` : 'retry due';
}
