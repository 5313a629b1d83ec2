import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { call, CallError, useEvents, type Job, type Skill } from './api.js';
import { ErrorLine } from './parts.js';
import { formObject, initialValues, SchemaFields, type FormValues, type Schema } from './schema-form.js';
import { terminalText } from '../../terminal-text.js';

/** The skills, with their validity and errors, as the daemon reloads them. */
export function SkillsPage() {
  const [skills, setSkills] = useState<Skill[] | null>(null);
  const [error, setError] = useState<CallError | null>(null);
  const load = useCallback(async () => {
    try {
      setSkills((await call<{ skills: Skill[] }>('skills/list')).skills);
      setError(null);
    } catch (failure) {
      setError(failure as CallError);
    }
  }, []);
  // Read once the stream stands (and each time it stands again), never before: a skill changed
  // between a reading and the stream would not be heard.
  useEvents(null, { skills: () => void load(), live: () => void load(), failure: (failure) => setError(failure) });
  return html`
    <h1 tabindex="-1">Skills</h1>
    ${error !== null && html`<${ErrorLine} error=${error} />`}
    ${skills === null && error === null && html`<p>Loading…</p>`}
    <ul class="skills" aria-live="polite">
      ${(skills ?? []).map(
        (skill) => html`<li key=${skill.id} class=${`skill ${skill.status}`} data-skill=${skill.id}>
          <h2>${terminalText(skill.name ?? skill.id)} <span class=${`badge ${skill.status}`}>${skill.status}</span></h2>
          <p class="quiet"><code>${skill.id}</code>${skill.version === null ? '' : ` · version ${terminalText(skill.version)}`} · ${skill.execution_modes.join(', ')} · ${skill.effective_engines.join(', ')}</p>
          ${skill.description !== undefined && html`<p>${terminalText(skill.description)}</p>`}
          ${skill.error !== undefined && html`<${ErrorLine} error=${skill.error} />`}
          ${(skill.warnings ?? []).map((warning) => html`<p class="warning">${terminalText(warning)}</p>`)}
          ${skill.version !== null && html`<a class="button" href=${`#/skills/${encodeURIComponent(skill.id)}/run`} aria-label=${`Start a job of ${skill.id}`}>Start a job</a>`}
        </li>`,
      )}
    </ul>
  `;
}

interface SkillDetail extends Skill {
  schemas: { input: Schema | null; parameter: Schema | null };
}

interface Problem {
  path: string;
  message: string;
}

/** The complaints of an INPUT_INVALID, by field path, per schema. */
function problems(error: CallError, which: 'input' | 'parameter'): Record<string, string> {
  const details = (error.details ?? {}) as Record<string, Problem[] | undefined>;
  return Object.fromEntries((details[which] ?? []).map((problem) => [problem.path, problem.message]));
}

/** A form from the skill's input (and parameter) schema that starts a job, then shows it. */
export function RunPage({ skillId }: { skillId: string }) {
  const [skill, setSkill] = useState<SkillDetail | null>(null);
  /** The skill's engines that can run on the daemon now (engines/list): the only ones offered. */
  const [engines, setEngines] = useState<string[]>([]);
  const [engine, setEngine] = useState('');
  const [mode, setMode] = useState('');
  const [input, setInput] = useState<FormValues>({});
  const [parameter, setParameter] = useState<FormValues>({});
  const [error, setError] = useState<CallError | null>(null);
  const [sending, setSending] = useState(false);
  useEffect(() => {
    Promise.all([call<SkillDetail>('skills/get', { skill_id: skillId }), call<{ engines: Array<{ name: string; available: boolean; reason?: string | null }> }>('engines/list')]).then(
      ([loaded, listed]) => {
        const runnable = loaded.effective_engines.filter((name) => listed.engines.some((one) => one.name === name && one.available && (one.reason ?? null) === null));
        setSkill(loaded);
        setEngines(runnable);
        setEngine(typeof loaded.default_engine === 'string' && runnable.includes(loaded.default_engine) ? loaded.default_engine : (runnable[0] ?? ''));
        setMode(loaded.execution_modes[0] ?? 'auto');
        setInput(initialValues(loaded.schemas.input));
        setParameter(initialValues(loaded.schemas.parameter));
      },
      (failure: CallError) => setError(failure),
    );
  }, [skillId]);
  if (skill === null) return html`<h1 tabindex="-1">Start a job of ${skillId}</h1>${error === null ? html`<p>Loading…</p>` : html`<${ErrorLine} error=${error} />`}`;
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setSending(true);
    try {
      const params = {
        skill_id: skill.id,
        engine,
        execution_mode: mode,
        input: skill.schemas.input === null ? {} : formObject(skill.schemas.input, input),
        parameter: skill.schemas.parameter === null ? {} : formObject(skill.schemas.parameter, parameter),
      };
      const job = await call<Job>('jobs/create', params);
      location.hash = `#/jobs/${encodeURIComponent(job.job_id)}`;
    } catch (failure) {
      setError(failure as CallError);
    } finally {
      setSending(false);
    }
  };
  const inputErrors = error?.code === 'INPUT_INVALID' ? problems(error, 'input') : {};
  const parameterErrors = error?.code === 'INPUT_INVALID' ? problems(error, 'parameter') : {};
  return html`
    <h1 tabindex="-1">Start a job of ${terminalText(skill.name ?? skill.id)}</h1>
    ${skill.description !== undefined && html`<p>${terminalText(skill.description)}</p>`}
    <form class="run" onSubmit=${(e: Event) => void submit(e)}>
      <div class="field">
        <label for="run-engine">Engine</label>
        ${engines.length === 0
          ? html`<p id="run-engine" class="problems" role="alert">None of this skill's engines (${skill.effective_engines.join(', ') || 'none'}) can run on the daemon now: <code>skillctl engines</code> says why.</p>`
          : html`<select id="run-engine" value=${engine} onChange=${(e: Event) => setEngine((e.target as HTMLSelectElement).value)}>
              ${engines.map((name) => html`<option value=${name}>${name}</option>`)}
            </select>`}
      </div>
      <div class="field">
        <label for="run-mode">Mode</label>
        <select id="run-mode" value=${mode} onChange=${(e: Event) => setMode((e.target as HTMLSelectElement).value)}>
          ${skill.execution_modes.map((name) => html`<option value=${name}>${name === 'interactive' ? 'interactive (may ask you)' : 'auto (unattended)'}</option>`)}
        </select>
      </div>
      ${skill.schemas.input !== null &&
      html`<fieldset><legend>Input</legend>
        <${SchemaFields} schema=${skill.schemas.input} prefix="input" values=${input} errors=${inputErrors} change=${(name: string, value: string) => setInput({ ...input, [name]: value })} />
      </fieldset>`}
      ${skill.schemas.parameter !== null &&
      html`<fieldset><legend>Parameters</legend>
        <${SchemaFields} schema=${skill.schemas.parameter} prefix="parameter" values=${parameter} errors=${parameterErrors} change=${(name: string, value: string) => setParameter({ ...parameter, [name]: value })} />
      </fieldset>`}
      ${error !== null && html`<${ErrorLine} error=${error} />`}
      ${error?.code === 'INPUT_INVALID' && html`<ul class="problems">${[...Object.entries(inputErrors), ...Object.entries(parameterErrors)].map(([path, message]) => html`<li><code>${path === '' ? '(the whole object)' : terminalText(path)}</code> ${terminalText(message)}</li>`)}</ul>`}
      <div class="actions"><button type="submit" class="primary" disabled=${sending || engines.length === 0}>Start the job</button></div>
    </form>
  `;
}
