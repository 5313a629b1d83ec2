import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { call, CallError, type Pending } from './api.js';
import { ErrorLine } from './parts.js';
import { valueText } from './text.js';
import { terminalText } from '../../terminal-text.js';

/**
 * The form a question's kind calls for, under the words it was asked in (the agent's message that
 * carried it, `words`, else its prompt), as skillctl and MCP map them: an approval is allow/deny
 * with the command or change in full; options are a single choice (labels shown, the option's
 * value sent); `confirm` is yes/no; anything else is free text, sent as written.
 */
export function QuestionForm({ jobId, pending, words, answered }: { jobId: string; pending: Pending; words: string | null; answered: () => Promise<void> }) {
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  // One key per question shown: a second click sends the same reply again, harmlessly.
  const [key] = useState(() => crypto.randomUUID());
  const reply = async (response: unknown): Promise<void> => {
    setSending(true);
    try {
      await call('jobs/reply', { job_id: jobId, interaction_id: pending.interaction_id, response, idempotency_key: key });
      setError(null);
      await answered();
    } catch (failure) {
      // A question answered elsewhere, or a job that moved on: the daemon's error, as it said it.
      setError(failure as CallError);
    } finally {
      setSending(false);
    }
  };
  return html`<section class="question" aria-labelledby="question-title">
    <h2 id="question-title">${pending.kind === 'approval' ? 'The agent asks for approval' : 'The agent asks'}</h2>
    <pre class="prompt">${terminalText(words ?? pending.prompt)}</pre>
    ${pending.kind === 'approval' ? html`<${Approval} pending=${pending} reply=${reply} sending=${sending} />` : html`<${Answer} pending=${pending} reply=${reply} sending=${sending} />`}
    ${error !== null && html`<${ErrorLine} error=${error} />`}
  </section>`;
}

interface FormProps {
  pending: Pending;
  reply: (response: unknown) => Promise<void>;
  sending: boolean;
}

/** Allow or deny, after the whole request: the command, the file change or the tool call. */
function Approval({ pending, reply, sending }: FormProps) {
  const hint = pending.ui_hints?.approval;
  const request = pending.context?.request;
  return html`
    ${hint !== undefined && html`<p class="approval-summary"><span class="badge">${terminalText(hint.kind.replace('_', ' '))}</span> <code>${terminalText(hint.summary)}</code></p>`}
    ${request !== undefined && html`<details open><summary>The request in full</summary><pre class="request">${terminalText(valueText(request))}</pre></details>`}
    <div class="actions">
      <button type="button" class="primary" disabled=${sending} onClick=${() => void reply('allow')}>Allow</button>
      <button type="button" class="danger" disabled=${sending} onClick=${() => void reply('deny')}>Deny</button>
    </div>
  `;
}

/** A choice among the options, yes/no, or text. */
function Answer({ pending, reply, sending }: FormProps) {
  const [text, setText] = useState('');
  const [picked, setPicked] = useState<number | null>(null);
  const options = pending.options ?? [];
  if (options.length === 0 && pending.kind === 'confirm') {
    return html`<div class="actions">
      <button type="button" class="primary" disabled=${sending} onClick=${() => void reply('yes')}>Yes</button>
      <button type="button" disabled=${sending} onClick=${() => void reply('no')}>No</button>
    </div>`;
  }
  const free = pending.kind !== 'choose_one';
  const submit = (e: Event): void => {
    e.preventDefault();
    const option = picked === null ? undefined : options[picked];
    if (option !== undefined) void reply(option.value === undefined ? option.label : option.value);
    else if (text.trim() !== '') void reply(text);
  };
  return html`<form onSubmit=${submit}>
    ${options.length > 0 &&
    html`<fieldset>
      <legend>${free ? 'Pick one, or write an answer below' : 'Pick one'}</legend>
      ${options.map(
        (option, index) => html`<label class="option">
          <input type="radio" name="option" value=${index} checked=${picked === index} required=${!free} onChange=${() => setPicked(index)} />
          ${terminalText(option.label)}
        </label>`,
      )}
    </fieldset>`}
    ${free &&
    html`<label class="block">Your answer
      <textarea rows="3" value=${text} required=${options.length === 0} onInput=${(e: Event) => {
        setText((e.target as HTMLTextAreaElement).value);
        setPicked(null);
      }}></textarea>
    </label>`}
    <div class="actions"><button type="submit" class="primary" disabled=${sending}>Send</button></div>
  </form>`;
}
