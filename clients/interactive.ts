import { createInterface } from 'node:readline';
import { RpcCallError } from '../rpc/client.js';
import type { Context } from './command.js';
import { EXIT } from './exit-codes.js';
import { followJob, type FollowOptions } from './follow-job.js';
import { errorText } from './format.js';
import { pickResponse, questionText, replyHint, valueText } from './interaction-text.js';
import { terminalText } from './terminal-text.js';
import type { PendingQuestion, ReplyAnswer } from './wire.js';

/** Asks the user one question; resolves to the line typed, or null when the input has ended (Ctrl-D). */
export type Ask = (question: string) => Promise<string | null>;

/** Thrown by an `Ask` when the user interrupts the prompt (Ctrl-C). */
export class PromptInterrupted extends Error {
  override readonly name = 'PromptInterrupted';
}

/** The last line of every question: what to type. */
export const ANSWER_PROMPT = 'answer> ';

/**
 * Follows a job to its end, asking `ask` for an answer each time it waits for input and sending
 * that with jobs/reply; then prints the result like `run --wait`. Resolves to the exit code; when
 * `ask` gives null (end of input) or is interrupted, the job is left waiting. `from` and `since`
 * as for `followJob`: a job just created is followed from its first event.
 */
export async function interact(ctx: Context, jobId: string, ask: Ask, from: FollowOptions['from'] = 'start', since?: string): Promise<number> {
  const asked = new Set<number>();
  return followJob(ctx, jobId, {
    from,
    since,
    notes: !ctx.json,
    onWaiting: async (out, { pending }) => {
      // A replayed or outdated event: the question is already being asked, or was.
      if (asked.has(pending.interaction_id)) return undefined;
      asked.add(pending.interaction_id);
      const answered = await askAndReply(out, jobId, pending, ask);
      if (answered === true) return undefined;
      out.warn(`skillctl: job ${jobId} is still waiting for a reply; answer later with: ${replyHint(jobId)}`);
      return answered === 'interrupted' ? EXIT.interrupted : 0;
    },
  });
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
    // An option's value comes from the agent, and JSON leaves DEL and C1 as they are.
    ctx.warn(terminalText(`reply accepted: ${JSON.stringify(valueText(response))}`));
  } catch (error) {
    // Someone else answered, or the job moved on (deadline, cancel): keep following it.
    if (!(error instanceof RpcCallError) || !['JOB_NOT_WAITING', 'INTERACTION_STALE'].includes(error.dataCode)) throw error;
    ctx.warn(`skillctl: reply not taken: ${errorText({ code: error.dataCode, message: error.message })}`);
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
