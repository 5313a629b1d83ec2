import { html } from 'htm/preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { call, CallError, TERMINAL, useEvents, type Interaction, type Job, type JobEvent, type Pending } from './api.js';
import { ConfirmButton, ErrorLine } from './parts.js';
import { QuestionForm } from './question.js';
import { JobOutcome } from './outcome.js';
import { statusText, timeText, valueText } from './text.js';
import { terminalText } from '../../terminal-text.js';

/** The events that make the conversation: the agent's messages, the questions, the turns and the end. */
const CONVERSATION = new Set(['status_changed', 'message', 'input_required', 'warning', 'network_refused', 'provider_retry', 'finished']);

/** One job: its state, its conversation as it streams, its question, its outcome and its log. */
export function JobPage({ jobId }: { jobId: string }) {
  const [job, setJob] = useState<Job | null>(null);
  const events = useRef<JobEvent[]>([]);
  const [, setHeard] = useState(0);
  const [rounds, setRounds] = useState<Map<number, Interaction>>(new Map());
  const [pending, setPending] = useState<Pending | null>(null);
  const [error, setError] = useState<CallError | null>(null);
  // Why the job's events stopped coming (a call that succeeds later does not make that untrue).
  const [unheard, setUnheard] = useState<CallError | null>(null);

  const refresh = useCallback(async () => {
    try {
      const now = await call<Job>('jobs/get', { job_id: jobId });
      setJob(now);
      setError(null);
      if (now.execution_mode === 'interactive') {
        const [asked, history] = await Promise.all([
          call<{ pending: Pending | null }>('jobs/pending', { job_id: jobId }),
          call<{ interactions: Interaction[] }>('jobs/history', { job_id: jobId }),
        ]);
        setPending(asked.pending);
        setRounds(new Map(history.interactions.map((round) => [round.interaction_id, round])));
      }
    } catch (failure) {
      setError(failure as CallError);
    }
  }, [jobId]);

  useEffect(() => void refresh(), [refresh]);
  useEvents(jobId, {
    job: (event) => {
      if (!CONVERSATION.has(event.type)) return;
      // A job's events come in order, from its first; one heard before (a stream made again) is left out.
      const last = events.current[events.current.length - 1];
      if (last !== undefined && last.seq >= event.seq) return;
      events.current.push(event);
      setHeard(events.current.length);
      // A change the job as loaded already shows (the stream starts with the job's past) changes nothing.
      if (event.type !== 'status_changed' || (job !== null && event.ts < job.updated_at)) return;
      // The new status at once; then the job, its question and its rounds as they are now.
      const to = event.data?.['to'];
      if (typeof to === 'string') setJob((current) => (current === null || current.job_id !== event.job_id ? current : { ...current, status: to }));
      void refresh();
    },
    back: () => void refresh(),
    failure: (failure) => setUnheard(failure),
  });

  const failure = error ?? unheard;
  if (job === null) return html`<h1 tabindex="-1">Job <code>${jobId}</code></h1>${failure === null ? html`<p>Loading…</p>` : html`<${ErrorLine} error=${failure} />`}`;
  const finished = TERMINAL.includes(job.status);
  return html`
    <h1 tabindex="-1">Job <code>${job.job_id}</code></h1>
    <section class="job-head" aria-label="State">
      <p><span class=${`badge ${job.status}`} role="status" aria-live="polite">${statusText(job.status)}</span></p>
      <dl>
        <dt>Skill</dt><dd>${job.skill_id}</dd>
        <dt>Owner</dt><dd>${job.owner?.user ?? '–'}</dd>
        ${job.share_with !== undefined && job.share_with.length > 0 && html`<dt>Shared with</dt><dd>${terminalText(job.share_with.join(', '))}</dd>`}
        <dt>Engine</dt><dd>${job.engine}</dd>
        <dt>Mode</dt><dd>${job.execution_mode}</dd>
        <dt>Host</dt><dd>${job.host ?? '–'}</dd>
        <dt>Turns</dt><dd>${job.attempt}</dd>
        <dt>Created</dt><dd>${timeText(job.created_at)}</dd>
        ${job.finished_at !== null && html`<dt>Finished</dt><dd>${timeText(job.finished_at)}</dd>`}
        ${job.wait_deadline_at !== null && html`<dt>Waits until</dt><dd>${timeText(job.wait_deadline_at)}</dd>`}
      </dl>
      ${job.input !== undefined && html`<details class="request"><summary>What it was asked</summary>
        <h3>Input</h3><pre>${terminalText(valueText(job.input))}</pre>
        ${job.parameter !== undefined && Object.keys(job.parameter).length > 0 && html`<h3>Parameter</h3><pre>${terminalText(valueText(job.parameter))}</pre>`}
      </details>`}
      ${job.error !== null && html`<${ErrorLine} error=${job.error} />`}
      ${error !== null && html`<${ErrorLine} error=${error} />`}
      ${unheard !== null && html`<${ErrorLine} error=${unheard} />`}
      <div class="actions">
        ${!finished &&
        html`<${ConfirmButton} label="Cancel job" danger=${true} question="Cancel this job? Its engine is stopped and the job ends as canceled." yes="Cancel the job" no="Keep it running"
          action=${async () => {
            await call('jobs/cancel', { job_id: job.job_id }).catch((failure: CallError) => setError(failure));
          }} />`}
        ${finished &&
        html`<${ConfirmButton} label="Retry" question="Run this job's request again, as a new job?" yes="Start a new job" no="Not now"
          action=${async () => {
            await call<Job>('jobs/retry', { job_id: job.job_id }).then(
              (next) => void (location.hash = `#/jobs/${encodeURIComponent(next.job_id)}`),
              (failure: CallError) => setError(failure),
            );
          }} />`}
      </div>
    </section>
    <section aria-labelledby="conversation">
      <h2 id="conversation">Conversation</h2>
      <${Conversation} events=${events.current} rounds=${rounds} open=${job.status === 'waiting_user' && pending !== null ? pending.interaction_id : null} />
    </section>
    ${job.status === 'waiting_user' && pending !== null && html`<${QuestionForm} key=${pending.interaction_id} jobId=${job.job_id} pending=${pending} words=${askedIn(events.current, pending.interaction_id)} answered=${refresh} />`}
    ${finished && html`<${JobOutcome} key=${job.status} jobId=${job.job_id} />`}
    <${LogTail} jobId=${job.job_id} attempt=${job.attempt} />
  `;
}

/** The words the open question was asked in: the agent's message that carried it, else null (its prompt). */
function askedIn(events: readonly JobEvent[], interactionId: number): string | null {
  const asking = askingMessages(events);
  const event = [...events].reverse().find((one) => one.type === 'input_required' && (one.data?.['pending'] as Pending | undefined)?.interaction_id === interactionId);
  return event === undefined ? null : (asking.get(event.seq)?.text ?? null);
}

/**
 * The agent's message that carried a question, by the question's event: the message just before
 * it, when its text holds the question's prompt. The question is shown once, in that message's
 * words, where it was asked (or in the open question's form while it waits).
 */
function askingMessages(events: readonly JobEvent[]): Map<number, { seq: number; text: string }> {
  const found = new Map<number, { seq: number; text: string }>();
  events.forEach((event, i) => {
    const before = events[i - 1];
    if (event.type !== 'input_required' || before?.type !== 'message') return;
    const prompt = String((event.data?.['pending'] as Pending | undefined)?.prompt ?? '').trim();
    const text = String(before.data?.['text'] ?? '').trimEnd();
    if (prompt !== '' && text.includes(prompt)) found.set(event.seq, { seq: before.seq, text });
  });
  return found;
}

/** What a question's kind asks of a person, in words (not the protocol's names). */
const KIND_NAMES: Readonly<Record<string, string>> = { open_text: 'an answer in your words', choose_one: 'a choice', confirm: 'yes or no', approval: 'an approval' };

/**
 * The conversation so far: turns, the agent's messages, each question with the reply it got,
 * warnings, refused connections and the end. The question still open is left to its form below.
 */
function Conversation({ events, rounds, open }: { events: JobEvent[]; rounds: Map<number, Interaction>; open: number | null }) {
  if (events.length === 0) return html`<p class="quiet">Nothing yet.</p>`;
  const asking = askingMessages(events);
  const merged = new Set([...asking.values()].map((message) => message.seq));
  let turn = 0;
  return html`<ol class="conversation" aria-live="polite">
    ${events.map((event) => {
      const data = event.data ?? {};
      switch (event.type) {
        case 'status_changed':
          if (data['to'] !== 'running') return null;
          turn += 1;
          return html`<li key=${event.seq} class="turn">Turn ${turn} started <time datetime=${event.ts}>${timeText(event.ts)}</time></li>`;
        case 'message':
          if (merged.has(event.seq)) return null;
          return html`<li key=${event.seq} class="message agent"><span class="who">Agent</span><pre>${terminalText(String(data['text'] ?? '').trimEnd())}</pre></li>`;
        case 'input_required': {
          const asked = data['pending'] as Pending;
          const round = rounds.get(asked.interaction_id);
          if (asked.interaction_id === open && (round === undefined || round.replied_at === null)) return null;
          const words = asking.get(event.seq)?.text ?? asked.prompt;
          return html`<li key=${event.seq} class="message question"><span class="who">The agent asks ${KIND_NAMES[asked.kind] ?? 'something'}</span><pre>${terminalText(words)}</pre>
            ${round !== undefined && round.replied_at !== null &&
            html`<div class="reply"><span class="who">${round.resolution_mode === 'user_reply' ? 'Reply' : `Reply (${round.resolution_mode ?? ''})`}</span><pre>${terminalText(valueText(round.response))}</pre></div>`}
          </li>`;
        }
        case 'warning':
          return html`<li key=${event.seq} class="note">Warning <code>${String(data['code'])}</code></li>`;
        case 'network_refused':
          return html`<li key=${event.seq} class="note">Connection refused: <code>${terminalText(`${String(data['host'])}:${String(data['port'])}`)}</code> — ${terminalText(String(data['detail'] ?? data['reason']))}${typeof data['suppressed'] === 'number' ? ` (and ${data['suppressed']} more before it, not shown)` : ''}</li>`;
        case 'provider_retry':
          return html`<li key=${event.seq} class="note">The model provider answered <code>${String(data['status'])}</code>: retry ${String(data['retry'])} in ${(Number(data['wait_ms']) / 1000).toFixed(1)} s</li>`;
        case 'finished':
          return html`<li key=${event.seq} class="note end">Finished: ${String(data['status'])}${data['error'] !== null && data['error'] !== undefined ? html` — <code>${(data['error'] as { code: string }).code}</code>` : ''}</li>`;
        default:
          return null;
      }
    })}
  </ol>`;
}

/** The most of the log's end shown. */
const TAIL_CHARS = 64 * 1024;

/** The end of what the agent said in the current attempt (jobs/logs, text), read when opened. */
function LogTail({ jobId, attempt }: { jobId: string; attempt: number }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<CallError | null>(null);
  const load = async (): Promise<void> => {
    try {
      let all = '';
      for (let offset = 0; ; ) {
        const chunk = await call<{ data: string; next_offset: number; eof: boolean }>('jobs/logs', { job_id: jobId, format: 'text', offset });
        all = (all + chunk.data).slice(-TAIL_CHARS);
        if (chunk.eof || chunk.next_offset === offset) break;
        offset = chunk.next_offset;
      }
      setText(all);
      setError(null);
    } catch (failure) {
      setError(failure as CallError);
    }
  };
  if (attempt === 0) return null;
  return html`<details class="logs" onToggle=${(e: Event) => (e.target as HTMLDetailsElement).open && void load()}>
    <summary>Log of turn ${attempt} (the agent’s words)</summary>
    <button type="button" onClick=${() => void load()}>Read again</button>
    ${error !== null && html`<${ErrorLine} error=${error} />`}
    ${text !== null && html`<pre class="log">${text === '' ? '(empty)' : terminalText(text)}</pre>`}
  </details>`;
}
