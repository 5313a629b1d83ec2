import { shortTime } from './format.js';
import { terminalText } from './terminal-text.js';
import type { InteractionView, PendingQuestion, PendingView } from './wire.js';

/** A reply or option value as text: strings verbatim, anything else as compact JSON. */
export function valueText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
}

/** The options as a numbered list, `  1) Label [value]`; the value is shown when it differs from the label. The agent wrote them: control characters are shown. */
export function optionLines(pending: PendingQuestion): string[] {
  return (pending.options ?? []).map((option, index) => {
    const value = valueText(option.value);
    return terminalText(`  ${index + 1}) ${option.label}${value === option.label ? '' : ` [${value}]`}`);
  });
}

/** The question itself: the prompt (its control characters shown), then the numbered options; an approval is a yes/no question. */
export function questionText(pending: PendingQuestion): string {
  const prompt = terminalText(pending.prompt);
  if (pending.kind === APPROVAL_KIND) return `${prompt} [y/n]`;
  return [prompt, ...optionLines(pending)].join('\n');
}

/** The kind of a pending that is a tool approval: answered `allow` or `deny`. */
export const APPROVAL_KIND = 'approval';

/** What a typed answer to an approval means: y, yes, allow → allow; n, no, deny → deny; else null (ask again). */
export function approvalAnswer(answer: string): 'allow' | 'deny' | null {
  const word = answer.trim().toLowerCase();
  if (['y', 'yes', 'allow'].includes(word)) return 'allow';
  if (['n', 'no', 'deny'].includes(word)) return 'deny';
  return null;
}

/** What `pending` prints: a header line and the question, or that the job is not waiting. */
export function pendingText(view: PendingView): string {
  if (view.pending === null) return notWaitingText(view);
  const { interaction_id, kind } = view.pending;
  return `job ${view.job_id} is waiting for a reply to interaction ${interaction_id} (${terminalText(kind)}):\n${questionText(view.pending)}`;
}

/** `job X is not waiting (status)`. */
export function notWaitingText(view: { job_id: string; status: string }): string {
  return `job ${view.job_id} is not waiting (${view.status})`;
}

/** The command that answers a waiting job, for notes on stderr. */
export function replyHint(jobId: string): string {
  return `skillctl reply ${jobId} <text...>`;
}

/**
 * The response for what the user typed, the same at the terminal prompt and for `reply`: to an
 * approval, y/yes/allow or n/no/deny; a number that names an option picks that option's value;
 * anything else is the text itself. What cannot be an answer (an approval's other words, a number
 * past a `choose_one` question's options) is `{ refused }`, with the valid choices.
 */
export function pickResponse(answer: string, pending: PendingQuestion): { response: unknown } | { refused: string } {
  if (pending.kind === APPROVAL_KIND) {
    const decision = approvalAnswer(answer);
    return decision === null ? { refused: `"${answer}" does not answer an approval: y (allow) or n (deny)` } : { response: decision };
  }
  const options = pending.options ?? [];
  if (options.length === 0 || !/^\s*\d+\s*$/.test(answer)) return { response: answer };
  const option = options[Number.parseInt(answer, 10) - 1];
  if (option !== undefined) return { response: option.value === undefined ? option.label : option.value };
  if (pending.kind === 'choose_one') return { refused: `${answer.trim()} is not one of the options:\n${optionLines(pending).join('\n')}` };
  return { response: answer };
}

/** Every round of `history`: a header line (`#id asked replied mode`), then the prompt and the response. */
export function historyText(interactions: InteractionView[]): string {
  return interactions.map(roundText).join('\n\n');
}

function roundText(round: InteractionView): string {
  const answered = round.replied_at !== null;
  const header = `#${round.interaction_id}  asked ${shortTime(round.asked_at)}  ${answered ? `replied ${shortTime(round.replied_at)}  ${round.resolution_mode ?? '-'}` : 'waiting for a reply'}`;
  return [header, labelled('prompt', round.prompt), labelled('response', answered ? valueText(round.response) : '-')].join('\n');
}

/** `  label:   text`, with the text's further lines indented under its first and its control characters shown. */
function labelled(label: string, text: string): string {
  const head = `  ${`${label}:`.padEnd(10)}`;
  return head + terminalText(text).split('\n').join(`\n${' '.repeat(head.length)}`);
}
