import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { call, CallError, type Result } from './api.js';
import { ErrorLine } from './parts.js';
import { valueText } from './text.js';
import { terminalText } from '../../terminal-text.js';

/** The name of an artifact within the folder, from the path jobs/result lists. */
function artifactName(path: string): string {
  const at = path.indexOf('/artifacts/');
  return at === -1 ? path : path.slice(at + '/artifacts/'.length);
}

/**
 * A job's output as a person reads it: an object's fields one by one, a text field as text (its
 * line breaks as breaks, never a JSON `\n`), a list of texts as a list, anything else as JSON
 * laid out; a whole output that is not an object as text or JSON.
 */
export function OutputView({ value }: { value: unknown }) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return html`<pre class="output">${terminalText(valueText(value))}</pre>`;
  return html`<dl class="output">
    ${Object.entries(value as Record<string, unknown>).map(([name, field]) => html`<dt>${terminalText(name)}</dt><dd>${fieldView(field)}</dd>`)}
  </dl>`;
}

function fieldView(field: unknown) {
  if (typeof field === 'string') return html`<div class="text">${terminalText(field)}</div>`;
  if (Array.isArray(field) && field.every((item) => typeof item === 'string')) return html`<ul>${field.map((item) => html`<li class="text">${terminalText(item)}</li>`)}</ul>`;
  if (typeof field === 'object' && field !== null) return html`<pre>${terminalText(JSON.stringify(field, null, 2))}</pre>`;
  return html`<code>${terminalText(String(field))}</code>`;
}

/** A finished job's output, warnings and artifacts (each a download through the daemon). */
export function JobOutcome({ jobId }: { jobId: string }) {
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<CallError | null>(null);
  useEffect(() => {
    call<Result>('jobs/result', { job_id: jobId }).then(setResult, (failure: CallError) => setError(failure));
  }, [jobId]);
  if (error !== null) return html`<section><h2>Result</h2><${ErrorLine} error=${error} /></section>`;
  if (result === null) return null;
  return html`<section aria-labelledby="result-title">
    <h2 id="result-title">Result</h2>
    ${result.output !== null && html`<${OutputView} value=${result.output} />`}
    ${result.warnings.length > 0 && html`<p>Warnings: ${result.warnings.map((code) => html`<code class="code">${code}</code> `)}</p>`}
    <h3>Artifacts</h3>
    ${result.artifacts.length === 0
      ? html`<p class="quiet">None.</p>`
      : html`<ul class="artifacts">
          ${result.artifacts.map((path) => {
            const name = artifactName(path);
            return html`<li><a href=${`/artifact?job_id=${encodeURIComponent(jobId)}&path=${encodeURIComponent(name)}`} download=${name.split('/').pop()}>${terminalText(name)}</a></li>`;
          })}
        </ul>`}
    ${(result.left_out ?? []).length > 0 && html`<p class="quiet">Left out (links leading outside the folder): ${(result.left_out ?? []).map(terminalText).join(', ')}</p>`}
  </section>`;
}
