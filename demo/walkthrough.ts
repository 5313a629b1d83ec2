import type { RpcClient } from '../rpc/client.js';
import { nextStop, newestJob } from '../clients/skill-test/job-wait.js';
import { DemoError } from './rig.js';
import { aside, heading, say } from './say.js';
import type { CtlOutcome, Skillctl } from './skillctl.js';

/** The text the auto run summarizes. */
export const SAMPLE_TEXT = [
  'The city council met on Tuesday to decide the future of the bike lanes on Main Street.',
  'After two hours of debate, members voted 7 to 2 to build protected lanes along the whole street by next spring.',
  'Shop owners worried about losing parking, so the council added a loading zone on every block.',
  'The work will cost 1.2 million dollars, most of it paid by a state grant.',
  'Residents can comment on the final design of the lanes at a public meeting on March 3.',
].join(' ');

export const DESTINATION = 'Lisbon';

/** What the demo answers when nobody is at a terminal: free text, or an option's number. */
export const AUTO_REPLIES = { text: 'Three days, museums and food', option: '2' } as const;

/** The demo was interrupted (Ctrl-C at skillctl's prompt, or a signal). */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

export interface Walk {
  ctl: Skillctl;
  client: RpcClient;
  /** A person answers at skillctl's prompt; otherwise the demo replies with `skillctl reply`. */
  terminal: boolean;
}

/** The walk-through: an auto run, an interactive run, then a look back. Resolves to the job ids it made. */
export async function walkthrough(walk: Walk): Promise<string[]> {
  heading('1/3  An auto run: one unattended turn, its output checked against the skill\'s schema');
  const summary = await walk.ctl.run(['run', 'summarize-text', '--engine', 'codex', '--input', `text=${SAMPLE_TEXT}`, '--wait']);
  expectOk(summary, 'the summarize-text run');
  heading('2/3  An interactive run: the agent asks, someone answers, the same session goes on');
  const plan = walk.terminal ? await planOnTerminal(walk) : await planByScript(walk);
  heading('3/3  Looking back: the jobs, and the questions and answers of the interactive one');
  expectOk(await walk.ctl.run(['jobs']), 'skillctl jobs');
  expectOk(await walk.ctl.run(['history', plan]), 'skillctl history');
  return [jobIdIn(summary), plan].filter((id): id is string => id !== null);
}

/** On a terminal skillctl asks each question itself; Ctrl-D there hands the rest to the demo. */
async function planOnTerminal(walk: Walk): Promise<string> {
  say('plan-trip asks before it plans. Answer at the "answer>" prompt (a number picks an option);', 'Ctrl-D leaves the question to the demo, Ctrl-C stops the demo.');
  const run = await walk.ctl.run(['run', 'plan-trip', '--engine', 'codex', '--mode', 'interactive', '--input', `destination=${DESTINATION}`], { terminal: true });
  if (run.code === 130 || run.signal === 'SIGINT') throw new Interrupted('interrupted at the prompt');
  const job = await newestJob(walk.client, 'plan-trip');
  if (job === null) throw new DemoError('skillctl run plan-trip made no job');
  if (job.status !== 'waiting_user') {
    expectOk(run, 'the plan-trip run');
    return job.job_id;
  }
  aside('the job still waits for a reply: the demo answers, as a script would');
  await replyUntilDone(walk, job.job_id);
  return job.job_id;
}

/** Without a terminal: `run --wait` stops at the first question, then `reply` until the job ends. */
async function planByScript(walk: Walk): Promise<string> {
  say(`plan-trip asks before it plans. Nobody is at a terminal${process.stdin.isTTY === true ? ' (--yes)' : ''}, so the demo answers with skillctl reply.`);
  const run = await walk.ctl.run(['run', 'plan-trip', '--engine', 'codex', '--mode', 'interactive', '--input', `destination=${DESTINATION}`, '--wait']);
  expectOk(run, 'the plan-trip run');
  const jobId = jobIdIn(run);
  if (jobId === null) throw new DemoError('could not read the job id from skillctl run');
  await replyUntilDone(walk, jobId);
  return jobId;
}

/** Answers each question with `skillctl reply`, shows the next with `skillctl pending`, and ends with `skillctl result`. */
async function replyUntilDone(walk: Walk, jobId: string): Promise<void> {
  for (;;) {
    const { pending } = await walk.client.request<{ pending: { interaction_id: number; options?: unknown[] } | null }>('jobs/pending', { job_id: jobId });
    if (pending === null) break;
    const answer = (pending.options ?? []).length > 0 ? AUTO_REPLIES.option : AUTO_REPLIES.text;
    expectOk(await walk.ctl.run(['reply', jobId, answer]), 'skillctl reply');
    aside('the agent takes its next turn in the same session; the demo waits until it asks again or finishes');
    const job = await nextStop(walk.client, jobId, pending.interaction_id);
    if (job.status !== 'waiting_user') break;
    expectOk(await walk.ctl.run(['pending', jobId]), 'skillctl pending');
  }
  expectOk(await walk.ctl.run(['result', jobId]), 'the plan-trip run');
}

/** The job id skillctl printed (`job <id> …`), or null. */
function jobIdIn(outcome: CtlOutcome): string | null {
  return /^job (\S+) /m.exec(`${outcome.stdout}\n${outcome.stderr}`)?.[1] ?? null;
}

function expectOk(outcome: CtlOutcome, what: string): void {
  if (outcome.signal !== null) throw new DemoError(`${what}: skillctl was stopped by ${outcome.signal}`);
  if (outcome.code !== 0) throw new DemoError(`${what} failed: skillctl exited ${outcome.code} (its message is above)`);
}
