// Browser notifications when a job starts waiting for the person (docs/web.md, "Notifications").
// The page asks once whether to show them, and keeps the answer in localStorage; a button in the
// header changes it later. Only changes heard live are told: the stream of every job's changes
// replays nothing, and a job's own view (which replays its past) tells none.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, type Job, type JobEvent, type Pending } from './api.js';
import { terminalText } from '../../terminal-text.js';

/** Where the person's answer is kept: one per page, as localStorage is one per origin (host and port). */
const CHOICE_KEY = 'skilld-web.notifications';

/** The lock one tab of the browser holds while it follows the jobs for notifications: one notification per change, however many tabs are open. */
const TELLER_LOCK = 'skilld-web.notifier';

/** The lock (shared) each tab holds while it shows a job with the page visible: the teller asks whether anyone looks before it tells. */
const VIEWING_LOCK = 'skilld-web.viewing:';

/** The most characters of a question a notification shows: its first line, cut there. */
const BODY_CHARS = 200;

type Choice = 'on' | 'off' | null;

/** Whether this browser can show the page's notifications: the API is there and the page is a secure context (127.0.0.1 and localhost are; another address over plain HTTP is not). */
function supported(): boolean {
  return typeof Notification !== 'undefined' && isSecureContext;
}

function permission(): NotificationPermission {
  return supported() ? Notification.permission : 'denied';
}

function storedChoice(): Choice {
  try {
    const value = localStorage.getItem(CHOICE_KEY);
    return value === 'on' || value === 'off' ? value : null;
  } catch {
    return null;
  }
}

const choiceListeners = new Set<(choice: Choice) => void>();

function setChoice(choice: 'on' | 'off'): void {
  try {
    localStorage.setItem(CHOICE_KEY, choice);
  } catch {
    // Storage refused (a private window's quota, a policy): the choice holds for this page alone.
  }
  for (const listener of choiceListeners) listener(choice);
}

/** The person's answer, as it changes here or in another tab of the page. */
function useChoice(): Choice {
  const [choice, set] = useState(storedChoice);
  useEffect(() => {
    const fromOtherTab = (event: StorageEvent): void => void (event.key === CHOICE_KEY && set(storedChoice()));
    choiceListeners.add(set);
    addEventListener('storage', fromOtherTab);
    return () => {
      choiceListeners.delete(set);
      removeEventListener('storage', fromOtherTab);
    };
  }, []);
  return choice;
}

/** Asks the browser (from the person's click: browsers ask only then) and keeps the answer: on only when granted. */
async function turnOn(): Promise<void> {
  const answer = await Notification.requestPermission();
  setChoice(answer === 'granted' ? 'on' : 'off');
}

/** The question, once: until the person answers it, either way. Not shown where the browser cannot notify or has refused the page. */
export function NotifyOffer() {
  const choice = useChoice();
  if (!supported() || choice !== null || permission() === 'denied') return null;
  return html`<aside class="offer" aria-label="Notifications">
    <p>Show a notification when a job starts waiting for you?</p>
    <div class="actions">
      <button type="button" class="primary" onClick=${() => void turnOn()}>Turn on notifications</button>
      <button type="button" onClick=${() => setChoice('off')}>No thanks</button>
    </div>
  </aside>`;
}

/** The header's switch, once the question was answered: the answer changed at any time. */
export function NotifyToggle() {
  const choice = useChoice();
  if (!supported() || choice === null || permission() === 'denied') return null;
  const on = choice === 'on' && permission() === 'granted';
  // The mark shows the state to the eye; aria-pressed tells it to a screen reader, with the name unchanged.
  return html`<button type="button" class="notify" aria-pressed=${on ? 'true' : 'false'} title=${on ? 'Notifications are on: click to turn them off' : 'Notifications are off: click to turn them on'}
    onClick=${() => (on ? setChoice('off') : void turnOn())}><span aria-hidden="true">${on ? '✓ ' : ''}</span>Notifications</button>`;
}

/**
 * Tells the person, by a browser notification, of each job that starts waiting for them while the
 * page is open, unless they are looking at that job (`viewing`, with the page visible) in this tab
 * or another. Clicking the notification brings the page to that job.
 */
export function useJobNotifications(viewing: string | null): void {
  const choice = useChoice();
  const enabled = supported() && choice === 'on' && permission() === 'granted';
  const visible = useVisible();
  const shown = useRef({ viewing, visible });
  shown.current = { viewing, visible };

  // This tab's view, for the teller in whichever tab it runs: a lock held while the job is shown, let go with the tab.
  useEffect(() => {
    if (!enabled || viewing === null || !visible || !('locks' in navigator)) return;
    return holdLock(`${VIEWING_LOCK}${viewing}`, 'shared');
  }, [enabled, viewing, visible]);

  useEffect(() => {
    if (!enabled) return;
    const looking = (jobId: string): boolean => shown.current.visible && shown.current.viewing === jobId;
    if (!('locks' in navigator)) return tell(looking);
    // One teller per browser: the other tabs wait for the lock, and one of them takes over when this tab closes.
    let stop = (): void => undefined;
    const release = holdLock(TELLER_LOCK, 'exclusive', () => (stop = tell(looking)));
    return () => {
      stop();
      release();
    };
  }, [enabled]);
}

/** Follows every job's changes and shows a notification for each that starts waiting; returns what stops it. */
function tell(looking: (jobId: string) => boolean): () => void {
  const source = new EventSource('/events');
  const told = new Set<string>();
  // One at a time, in the order heard: a question's notification never overtakes an earlier one's.
  let queue = Promise.resolve();
  source.addEventListener('job', (message) => {
    const event = JSON.parse((message as MessageEvent<string>).data) as JobEvent;
    if (event.type !== 'status_changed' || event.data?.['to'] !== 'waiting_user') return;
    queue = queue.then(() => notify(event.job_id, looking, told)).catch(() => undefined);
  });
  source.addEventListener('failure', () => source.close());
  return () => source.close();
}

/** The notification of one job's question, as it is now: none when it no longer waits, when it was told already, or when someone looks at it. */
async function notify(jobId: string, looking: (jobId: string) => boolean, told: Set<string>): Promise<void> {
  const [job, asked] = await Promise.all([call<Job>('jobs/get', { job_id: jobId }), call<{ pending: Pending | null }>('jobs/pending', { job_id: jobId })]);
  const pending = asked.pending;
  if (job.status !== 'waiting_user' || pending === null) return;
  const key = `${jobId}:${pending.interaction_id}`;
  if (told.has(key) || looking(jobId) || (await lookedAtElsewhere(jobId))) return;
  told.add(key);
  const notification = new Notification(`${terminalText(job.skill_id)} is waiting for you`, { body: firstLine(pending.prompt), tag: `skilld-${key}` });
  notification.onclick = () => {
    window.focus();
    location.hash = `#/jobs/${encodeURIComponent(jobId)}`;
    notification.close();
  };
}

/** Whether another tab shows the job with its page visible (it holds the job's viewing lock). */
async function lookedAtElsewhere(jobId: string): Promise<boolean> {
  if (!('locks' in navigator)) return false;
  const { held = [] } = await navigator.locks.query();
  return held.some((lock) => lock.name === `${VIEWING_LOCK}${jobId}`);
}

/**
 * The question's first line that says something, as plain text (a notification shows no markup)
 * through `terminalText`: a control character or a bidi override shows as its escape, so it
 * cannot reorder or hide what the person reads. Cut at BODY_CHARS characters.
 */
function firstLine(prompt: string): string {
  const line = prompt.split('\n').find((text) => text.trim() !== '')?.trim() ?? '';
  const chars = Array.from(line);
  return terminalText(chars.length > BODY_CHARS ? `${chars.slice(0, BODY_CHARS - 1).join('')}…` : line);
}

/** Holds a lock of the page's origin until the function returned is called (or the tab closes); `granted` runs once it is held. */
function holdLock(name: string, mode: LockMode, granted?: () => void): () => void {
  const stop = new AbortController();
  const held = (): Promise<void> =>
    new Promise((resolve) => {
      if (stop.signal.aborted) return resolve();
      granted?.();
      stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  // A request still waiting is withdrawn by the signal (and rejects, which is expected).
  navigator.locks.request(name, { mode, signal: stop.signal }, held).catch(() => undefined);
  return () => stop.abort();
}

/** Whether the page is visible (its tab in front, its window not minimised), as it changes. */
function useVisible(): boolean {
  const [visible, setVisible] = useState(document.visibilityState === 'visible');
  useEffect(() => {
    const onChange = (): void => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', onChange);
    return () => document.removeEventListener('visibilitychange', onChange);
  }, []);
  return visible;
}
