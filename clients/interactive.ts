import { createInterface } from 'node:readline';
import { RpcCallError } from '../rpc/client.js';
import type { Context } from './command.js';
import { jobEvents } from './events.js';
import { pickResponse, questionText, replyHint, valueText } from './interaction-text.js';
import { reportResult } from './job-commands.js';
import type { JobEvent, PendingQuestion, PendingView, ReplyAnswer, ResultView } from './wire.js';

/** Asks the user one question; resolves to the line typed, or null when the input has ended (Ctrl-D). */
export type Ask = (question: string) => Promise<string | null>;

/** Thrown by an `Ask` when the user interrupts the prompt (Ctrl-C). */
export class PromptInterrupted extends Error {
  override readonly name = 'PromptInterrupted';
}

/** The last line of every question: what to type. */
export const ANSWER_PROMPT = 'answer> ';

/** Exit code after Ctrl-C at the prompt (128 + SIGINT), as shells report an interrupted program. */
const EXIT_INTERRUPTED = 130;

/**
 * Follows a job to its end, asking `ask` for an answer each time it waits for input and sending
 * that with jobs/reply; then prints the result like `run --wait`. Resolves to the exit code; when
 * `ask` gives null (end of input) or is interrupted, the job is left waiting.
 */
export async function interact(ctx: Context, jobId: string, ask: Ask): Promise<number> {
  const asked = new Set<number>();
  for await (const event of jobEvents(ctx.client, { job_id: jobId, after_seq: 0 })) {
    if (event.type === 'finished') return reportResult(ctx, await ctx.client.request<ResultView>('jobs/result', { job_id: jobId }));
    const to = statusTo(event);
    if (to !== undefined && !ctx.json) ctx.warn(`job ${jobId} ${to}`);
    if (to !== 'waiting_user') continue;
    const { pending } = await ctx.client.request<PendingView>('jobs/pending', { job_id: jobId });
    // A replayed or outdated event: the question was answered meanwhile, or is already being asked.
    if (pending === null || asked.has(pending.interaction_id)) continue;
    asked.add(pending.interaction_id);
    const answered = await askAndReply(ctx, jobId, pending, ask);
    if (answered !== true) {
      ctx.warn(`skillctl: job ${jobId} is still waiting for a reply; answer later with: ${replyHint(jobId)}`);
      return answered === 'interrupted' ? EXIT_INTERRUPTED : 0;
    }
  }
  throw new Error('the event stream ended early'); // jobEvents ends only by throwing
}

function statusTo(event: JobEvent): string | undefined {
  const data = event.data as { to?: unknown } | null;
  return event.type === 'status_changed' && typeof data?.to === 'string' ? data.to : undefined;
}

/** Asks until the user gives a usable answer, sends it; true once sent (or the question went stale). */
async function askAndReply(ctx: Context, jobId: string, pending: PendingQuestion, ask: Ask): Promise<true | 'eof' | 'interrupted'> {
  let picked: ReturnType<typeof pickResponse> = { refused: '' };
  try {
    // The whole question once; after that just the prompt again, with what was wrong.
    let answer = await ask(`\n${questionText(pending)}\n${ANSWER_PROMPT}`);
    for (;;) {
      if (answer === null) return 'eof';
      picked = answer.trim() === '' ? { refused: '' } : pickResponse(answer, pending);
      if ('response' in picked) break;
      answer = await ask(picked.refused === '' ? ANSWER_PROMPT : `${picked.refused}\n${ANSWER_PROMPT}`);
    }
  } catch (error) {
    if (error instanceof PromptInterrupted) return 'interrupted';
    throw error;
  }
  const { response } = picked;
  try {
    await ctx.client.request<ReplyAnswer>('jobs/reply', { job_id: jobId, interaction_id: pending.interaction_id, response });
    ctx.warn(`reply accepted: ${JSON.stringify(valueText(response))}`);
  } catch (error) {
    // Someone else answered, or the job moved on (deadline, cancel): keep following it.
    if (!(error instanceof RpcCallError) || !['JOB_NOT_WAITING', 'INTERACTION_STALE'].includes(error.dataCode)) throw error;
    ctx.warn(`skillctl: reply not taken: ${error.dataCode}: ${error.message}`);
  }
  return true;
}

/**
 * An `Ask` on the process's terminal with node:readline: the question's last line is the prompt.
 * Ctrl-D gives null; Ctrl-C rejects with PromptInterrupted.
 */
export const terminalAsk: Ask = (question) => {
  const lines = question.split('\n');
  const prompt = lines.pop() ?? '';
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    let answer: string | null = null;
    let interrupted = false;
    rl.on('SIGINT', () => {
      interrupted = true;
      rl.close();
    });
    rl.once('close', () => {
      if (answer === null) process.stdout.write('\n'); // end the prompt line before the note that follows
      if (interrupted) reject(new PromptInterrupted('interrupted'));
      else resolve(answer);
    });
    rl.question(prompt, (line) => {
      answer = line;
      rl.close();
    });
  });
};

/** True when both stdin and stdout are terminals: a person can answer questions. */
export function onTerminal(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}
