import { html } from 'htm/preact';
import { Component } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { call, CallError, useEvents, type Job, type JobEvent, type Skill } from './api.js';
import { ErrorLine, useNow } from './parts.js';
import { age, shortId, statusText } from './text.js';

const STATUSES = ['waiting_user', 'queued', 'running', 'succeeded', 'failed', 'canceled'];

/** How many jobs the list shows, besides every one that waits for a person. */
const LIST_LIMIT = 200;

interface Filters {
  status: string;
  skill: string;
}

/** Jobs waiting for a person first, then the newest first. */
function ordered(jobs: Map<string, Job>): Job[] {
  return [...jobs.values()].sort((a, b) => Number(b.status === 'waiting_user') - Number(a.status === 'waiting_user') || (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
}

/** The list with `job` as it is now: in it when the filter takes it, else out of it. */
function placed(jobs: Map<string, Job> | null, job: Job, filters: Filters): Map<string, Job> | null {
  if (jobs === null) return jobs;
  const next = new Map(jobs);
  if (matches(job, filters)) next.set(job.job_id, job);
  else next.delete(job.job_id);
  return next;
}

function matches(job: Job, filters: Filters): boolean {
  return (filters.status === '' || job.status === filters.status) && (filters.skill === '' || job.skill_id === filters.skill);
}

/** The jobs, live: a job's status changes as its events arrive, a new job appears, without reloading. */
export function JobsPage() {
  const [filters, setFilters] = useState<Filters>({ status: '', skill: '' });
  const [jobs, setJobs] = useState<Map<string, Job> | null>(null);
  const [skills, setSkills] = useState<string[]>([]);
  const [error, setError] = useState<CallError | null>(null);
  const now = useNow();

  const load = useCallback(async () => {
    try {
      const params = { limit: LIST_LIMIT, ...(filters.status === '' ? {} : { status: filters.status }), ...(filters.skill === '' ? {} : { skill_id: filters.skill }) };
      const waiting = filters.status === '' ? call<{ jobs: Job[] }>('jobs/list', { ...params, status: 'waiting_user', limit: 1000 }) : Promise.resolve({ jobs: [] });
      const [page, asking] = await Promise.all([call<{ jobs: Job[] }>('jobs/list', params), waiting]);
      setJobs(new Map([...asking.jobs, ...page.jobs].map((job) => [job.job_id, job])));
      setError(null);
    } catch (failure) {
      setError(failure as CallError);
    }
  }, [filters]);

  // The jobs are read once the list's stream stands, and each time it stands again, never before: a
  // job made, or a change, between a reading and the stream would not be heard. Again when the
  // filters change.
  const [stood, setStood] = useState(0);
  useEffect(() => {
    if (stood > 0) void load();
  }, [load, stood]);
  // The skills to filter by: read as the stream stands, and again each time it stands again, so a
  // page opened while the daemon was away fills them once it is back.
  useEffect(() => {
    if (stood > 0) void call<{ skills: Skill[] }>('skills/list').then((answer) => setSkills(answer.skills.map((skill) => skill.id)), () => undefined);
  }, [stood]);

  // The last status each job's events gave, and the jobs asked for and not answered yet.
  const heard = useRef(new Map<string, { to: string; ts: string }>());
  const asking = useRef(new Set<string>());
  const fetchJob = async (jobId: string): Promise<void> => {
    asking.current.add(jobId);
    try {
      const fetched = await call<Job>('jobs/get', { job_id: jobId });
      // An event that came while the answer was on its way is newer than it.
      const last = heard.current.get(jobId);
      const job = last !== undefined && last.ts > fetched.updated_at ? { ...fetched, status: last.to } : fetched;
      setJobs((current) => placed(current, job, filters));
    } catch {
      // Gone meanwhile (removed): the list shows what it had.
    } finally {
      asking.current.delete(jobId);
    }
  };

  useEvents(null, {
    job: (event: JobEvent) => {
      const to = event.data?.['to'];
      if (event.type !== 'status_changed' || typeof to !== 'string') return;
      heard.current.set(event.job_id, { to, ts: event.ts });
      // A job in the list shows its new status at once, from the event itself.
      const known = jobs?.get(event.job_id);
      if (known !== undefined) {
        setJobs((current) => {
          const held = current?.get(event.job_id);
          return held === undefined ? current : placed(current, { ...held, status: to }, filters);
        });
      }
      // A job not in the list (new, or outside the filter until now), or not on a host yet: asked for,
      // once the new status is drawn (starting a request takes the browser a moment).
      if ((known === undefined || known.host === null || known.host === undefined) && !asking.current.has(event.job_id)) setTimeout(() => void fetchJob(event.job_id), 0);
    },
    live: () => setStood((times) => times + 1),
    failure: (failure) => setError(failure),
  });

  const shown = jobs === null ? null : ordered(jobs);
  const waiting = shown?.filter((job) => job.status === 'waiting_user').length ?? 0;
  return html`
    <h1 tabindex="-1">Jobs</h1>
    <form class="filters" onSubmit=${(e: Event) => e.preventDefault()}>
      <label>Status
        <select value=${filters.status} onChange=${(e: Event) => setFilters({ ...filters, status: (e.target as HTMLSelectElement).value })}>
          <option value="">any</option>
          ${STATUSES.map((status) => html`<option value=${status}>${statusText(status)}</option>`)}
        </select>
      </label>
      <label>Skill
        <select value=${filters.skill} onChange=${(e: Event) => setFilters({ ...filters, skill: (e.target as HTMLSelectElement).value })}>
          <option value="">any</option>
          ${skills.map((id) => html`<option value=${id}>${id}</option>`)}
        </select>
      </label>
    </form>
    ${error !== null && html`<${ErrorLine} error=${error} />`}
    <p class="summary" role="status" aria-live="polite">
      ${shown === null ? 'Loading…' : `${shown.length} job${shown.length === 1 ? '' : 's'}${waiting > 0 ? `, ${waiting} waiting for you` : ''}`}
    </p>
    ${shown !== null && shown.length > 0 &&
    html`<table class="jobs">
      <thead><tr><th scope="col">Status</th><th scope="col">Job</th><th scope="col">Skill</th><th scope="col">Engine</th><th scope="col">Host</th><th scope="col">Age</th></tr></thead>
      <tbody>
        ${shown.map((job) => html`<${JobRow} key=${job.job_id} job=${job} now=${now} />`)}
      </tbody>
    </table>`}
  `;
}

/** One job of the list; drawn again only when its job or the ages change, so a long list shows a change as soon as a short one. */
class JobRow extends Component<{ job: Job; now: number }> {
  override shouldComponentUpdate(next: { job: Job; now: number }): boolean {
    return next.job !== this.props.job || next.now !== this.props.now;
  }

  override render() {
    const { job, now } = this.props;
    return html`<tr data-job=${job.job_id} class=${`status-${job.status}`}>
      <td data-label="Status"><span class=${`badge ${job.status}`}>${statusText(job.status)}</span></td>
      <td data-label="Job"><a href=${`#/jobs/${encodeURIComponent(job.job_id)}`} aria-label=${`job ${job.job_id}`}><code>${shortId(job.job_id)}</code></a></td>
      <td data-label="Skill">${job.skill_id}</td>
      <td data-label="Engine">${job.engine}</td>
      <td data-label="Host">${job.host ?? '–'}</td>
      <td data-label="Age"><time datetime=${job.created_at} title=${job.created_at}>${age(job.created_at, now)}</time></td>
    </tr>`;
  }
}
