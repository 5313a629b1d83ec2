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
    ${result.output !== null && html`<pre class="output">${terminalText(valueText(result.output))}</pre>`}
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
