import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { useReach } from './api.js';
import { JobPage } from './job.js';
import { JobsPage } from './jobs.js';
import { NotifyOffer, NotifyToggle, useJobNotifications } from './notify.js';
import { RunPage, SkillsPage } from './skills.js';
import { terminalText } from '../../terminal-text.js';

/** Where the page is: `#/`, `#/jobs/<id>`, `#/skills`, `#/skills/<id>` (its form, as `#/skills/<id>/run`); anything else is no place. */
function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = (): void => setHash(location.hash);
    addEventListener('hashchange', onChange);
    // The effect runs after the first render: a change in between fired no event this listener heard.
    onChange();
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash.replace(/^#/, '') || '/';
}

/** The page: a header with the two places and the notifications' switch, a line when the daemon is away, and the place shown. */
export function App() {
  const route = useRoute();
  const reach = useReach();
  const job = /^\/jobs\/([^/]+)$/.exec(route);
  const run = /^\/skills\/([^/]+)(?:\/run)?$/.exec(route);
  const place = job?.[1] !== undefined ? 'jobs' : route.startsWith('/skills') ? 'skills' : 'jobs';
  useJobNotifications(job?.[1] !== undefined ? decodeURIComponent(job[1]) : null);
  useEffect(() => {
    // A new place is announced to screen readers by its heading taking the focus.
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [route]);
  return html`
    <header class="top">
      <a class="brand" href="#/">skilld</a>
      <nav aria-label="Places">
        <a href="#/" aria-current=${place === 'jobs' ? 'page' : undefined}>Jobs</a>
        <a href="#/skills" aria-current=${place === 'skills' ? 'page' : undefined}>Skills</a>
      </nav>
      <${NotifyToggle} />
    </header>
    <${NotifyOffer} />
    ${reach !== 'connected' &&
    html`<p class="banner" role="status">
      ${reach === 'daemon_away'
        ? 'The daemon does not answer (a restart?). This page goes on as soon as it is back.'
        : 'The page’s server (skillctl web) does not answer. This page goes on when it is back with the same token; with a new one, open the address it printed.'}
    </p>`}
    <main>
      ${job?.[1] !== undefined
        ? html`<${JobPage} key=${job[1]} jobId=${decodeURIComponent(job[1])} />`
        : run?.[1] !== undefined
          ? html`<${RunPage} key=${run[1]} skillId=${decodeURIComponent(run[1])} />`
          : route === '/skills'
            ? html`<${SkillsPage} />`
            : route === '/' || route === '/jobs'
              ? html`<${JobsPage} />`
              : html`<${NotFound} route=${route} />`}
    </main>
  `;
}

/** A place the page does not have: said so, with the way back, rather than another place shown in silence. */
function NotFound({ route }: { route: string }) {
  return html`
    <h1 tabindex="-1">Not found</h1>
    <p>This page has no place <code>${terminalText(`#${route}`)}</code>. Go to the <a href="#/">jobs</a> or the <a href="#/skills">skills</a>.</p>
  `;
}
