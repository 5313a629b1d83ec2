// The page's browser notifications (docs/web.md, "Notifications") in a real browser: asked once,
// then one notification for each job that starts waiting, heard live, and none for the job the
// person is looking at. The context is granted the permission; headless chromium shows nothing
// that can be seen, so window.Notification is wrapped to record what the page shows (the
// permission stays the browser's own). Each test awaits what happens; none times anything.
import t from 'tap';
import type { BrowserContext, Page } from 'playwright-core';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { keepFailedPages, launchBrowser, NO_BROWSER, SCREENS, screenshot, signedIn, startWeb } from '../helpers/web.js';
import { terminalText } from '../../clients/terminal-text.js';

/** Records each notification the page makes in `window.shown`; the permission is the real one, which the context was granted. */
const RECORD_NOTIFICATIONS = `(() => {
  const Real = window.Notification;
  window.shown = [];
  class Recorded {
    static get permission() { return Real.permission; }
    static requestPermission() { return Real.requestPermission(); }
    constructor(title, options = {}) {
      Object.assign(this, { title, body: options.body, tag: options.tag, onclick: null, closed: false });
      window.shown.push(this);
    }
    close() { this.closed = true; }
  }
  window.Notification = Recorded;
})();`;

/** What the page's globals hold that the tests read (they are compiled without the browser's types). */
interface InPage {
  shown: unknown[];
  navigator: { locks: { query(): Promise<{ held?: { name: string }[] }> } };
}

interface Shown {
  title: string;
  body: string;
  tag: string;
}

if (NO_BROWSER !== false) {
  t.plan(0, `notifications in a browser: ${NO_BROWSER}`);
} else {
  await suite();
}

async function suite(): Promise<void> {
  const daemon = await TestDaemon.start();
  const client = await daemon.client();
  const web = await startWeb(daemon.socket);
  const browser = await launchBrowser();
  t.teardown(async () => {
    await browser.close();
    await web.stop();
    await daemon.cleanup();
  });
  const follow = keepFailedPages(t);

  const asking = async (scenario: string): Promise<JobView> => {
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario } });
    await waitForStatus(client, job.job_id, ['waiting_user']);
    return job;
  };
  /** A context granted notifications, recording them, and a tab of it signed in. */
  const context = async (): Promise<{ context: BrowserContext; tab: Page }> => {
    const made = await browser.newContext({ viewport: SCREENS.desktop });
    await made.grantPermissions(['notifications'], { origin: web.origin });
    await made.addInitScript(RECORD_NOTIFICATIONS);
    return { context: made, tab: await signedIn(await made.newPage(), web, follow) };
  };
  // Read in the page as expressions in text, which playwright's evaluate runs by itself (the tests
  // are compiled without the browser's types); waitForFunction would evaluate text inside the page,
  // which its CSP forbids, so it gets functions.
  const shown = (tab: Page): Promise<Shown[]> => tab.evaluate<Shown[]>('window.shown.map(({ title, body, tag }) => ({ title, body, tag }))');
  /** Waits until `tab` has shown `count` notifications in all, and gives them. */
  const until = async (tab: Page, count: number): Promise<Shown[]> => {
    await tab.waitForFunction((n) => (globalThis as unknown as InPage).shown.length >= n, count);
    return shown(tab);
  };
  const tag = (job: JobView, interaction: number): string => `skilld-${job.job_id}:${interaction}`;
  /** Waits until the list of `tab` stands (it reads the jobs only then): its stream of every job is made. */
  const listStands = (tab: Page): Promise<void> => tab.locator('p.summary', { hasText: /^\d+ jobs?/ }).waitFor();
  /** Waits for the stream the notifications follow, once the list's own is made: it hears every change from then on. */
  const waitForTeller = (tab: Page): Promise<unknown> => tab.waitForResponse((response) => new URL(response.url()).pathname === '/events' && !new URL(response.url()).searchParams.has('job_id'));
  /** Turns notifications on from the question, and waits until what tells them hears every change. */
  const turnOn = async (tab: Page): Promise<void> => {
    await listStands(tab);
    await Promise.all([waitForTeller(tab), tab.getByRole('button', { name: 'Turn on notifications' }).click()]);
  };
  /** Waits until a tab of the browser holds, or no longer holds, the lock that says it shows `job` with the page visible. */
  const viewingLock = (tab: Page, job: JobView, held: boolean): Promise<unknown> =>
    tab.waitForFunction(
      async ([name, wanted]) => ((await (globalThis as unknown as InPage).navigator.locks.query()).held ?? []).some((lock) => lock.name === name) === wanted,
      [`skilld-web.viewing:${job.job_id}`, held] as const,
    );

  t.test('asked once: turned on, the choice is kept, and the page does not ask again', async (t) => {
    const { context: made, tab } = await context();
    const offer = tab.getByRole('complementary', { name: 'Notifications' });
    await offer.getByText('Show a notification when a job starts waiting for you?').waitFor();
    await offer.getByRole('button', { name: 'Turn on notifications' }).click();
    await offer.waitFor({ state: 'detached' });
    const toggle = tab.locator('header').getByRole('button', { name: 'Notifications' });
    t.equal(await toggle.getAttribute('aria-pressed'), 'true');
    t.equal(await tab.evaluate("localStorage.getItem('skilld-web.notifications')"), 'on');
    await tab.reload();
    await tab.getByRole('heading', { name: 'Jobs' }).waitFor();
    await toggle.waitFor();
    t.equal(await offer.count(), 0, 'not asked again');
    await screenshot(tab, 'notifications-on');
    await tab.setViewportSize(SCREENS.phone);
    await screenshot(tab, 'notifications-on');
    await made.close();
  });

  t.test('dismissed, the page does not ask again either; the header switch turns them on later', async (t) => {
    const { context: made, tab } = await context();
    const offer = tab.getByRole('complementary', { name: 'Notifications' });
    await offer.getByRole('button', { name: 'No thanks' }).click();
    await offer.waitFor({ state: 'detached' });
    await tab.reload();
    const toggle = tab.locator('header').getByRole('button', { name: 'Notifications' });
    await toggle.waitFor();
    t.equal(await offer.count(), 0);
    t.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await toggle.click();
    await tab.locator('header [aria-pressed="true"]').waitFor();
    t.equal(await tab.evaluate("localStorage.getItem('skilld-web.notifications')"), 'on');
    await made.close();
  });

  t.test('a job that starts waiting is told once, with its skill and its question; the click opens it; a replay, and the job looked at, are not told', async (t) => {
    // Waiting before the page opens: the list shows it, and no notification tells of it.
    const before = await asking('ask');
    const { context: made, tab } = await context();
    await turnOn(tab);
    await tab.locator(`tr[data-job="${before.job_id}"]`).getByText('waiting for you').waitFor();

    const twice = await asking('ask_twice');
    const [first] = await until(tab, 1);
    t.same(first, { title: 'echo-both is waiting for you', body: 'Question 1?', tag: tag(twice, 1) });

    // A job's view replays its past, its question too: nothing is told of it.
    await tab.goto(`${web.origin}/#/jobs/${before.job_id}`);
    await tab.locator('section.question').getByText('Which city should I use?').waitFor();
    await tab.goto(`${web.origin}/#/`);
    await tab.getByRole('heading', { name: 'Jobs' }).waitFor();

    // The click brings the page to the job, where the person answers; its next question comes while they look at it.
    await tab.evaluate('window.shown[0].onclick()');
    await tab.waitForURL(`${web.origin}/#/jobs/${twice.job_id}`);
    t.equal(await tab.evaluate('window.shown[0].closed'), true, 'the notification closes once clicked');
    await tab.getByLabel('Your answer').fill('Lisbon');
    await viewingLock(tab, twice, true);
    await tab.getByRole('button', { name: 'Send' }).click();
    await tab.locator('section.question').getByText('Question 2?').waitFor();

    // What a question looks like told: its first line, every control character as its escape.
    const hostile = await asking('hostile_ask');
    const all = await until(tab, 2);
    const prompt = (await client.request<{ pending: { prompt: string } }>('jobs/pending', { job_id: hostile.job_id })).pending.prompt;
    t.same(all, [first, { title: 'echo-both is waiting for you', body: terminalText(prompt.split('\n')[0] ?? ''), tag: tag(hostile, 1) }], 'one for each job that started waiting, none for the one looked at, nor for the one waiting before');
    t.match(all[1]?.body, /\\x1b\[2J.*\\u202eevil\\u202c/, 'escaped, not acting on the text');
    await made.close();
    for (const job of [before, twice, hostile]) await client.request('jobs/cancel', { job_id: job.job_id });
  });

  t.test('the job looked at with the page hidden is told, and not the one another tab shows; of two tabs one tells, and the other takes over when it closes', async (t) => {
    const { context: made, tab } = await context();
    await turnOn(tab);
    const twice = await asking('ask_twice');
    await until(tab, 1);
    await tab.goto(`${web.origin}/#/jobs/${twice.job_id}`);
    await tab.locator('section.question').getByText('Question 1?').waitFor();
    await viewingLock(tab, twice, true);
    // Hidden (another tab in front, a window minimised), as the browser would say it.
    await tab.evaluate("Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true }); document.dispatchEvent(new Event('visibilitychange'))");
    await viewingLock(tab, twice, false);
    await client.request('jobs/reply', { job_id: twice.job_id, interaction_id: 1, response: 'Lisbon' });
    const [, second] = await until(tab, 2);
    t.same(second, { title: 'echo-both is waiting for you', body: 'Question 2?', tag: tag(twice, 2) });

    // A second tab of the same browser, looking at a job: the first tab tells, but not of that job.
    const other = await signedIn(await made.newPage(), web, follow);
    await other.locator('header [aria-pressed="true"]').waitFor();
    const third = await asking('ask_twice');
    t.same((await until(tab, 3))[2]?.tag, tag(third, 1));
    await other.goto(`${web.origin}/#/jobs/${third.job_id}`);
    await other.locator('section.question').getByText('Question 1?').waitFor();
    await viewingLock(tab, third, true);
    await client.request('jobs/reply', { job_id: third.job_id, interaction_id: 1, response: 'Rome' });
    await other.locator('section.question').getByText('Question 2?').waitFor();
    const one = await asking('ask');
    t.same((await until(tab, 4))[3]?.tag, tag(one, 1), "the next told is another job's: not the question the other tab shows");

    // The first tab closes: the other takes over, and tells from then on what it hears.
    await other.goto(`${web.origin}/#/`);
    await listStands(other);
    const takenOver = waitForTeller(other);
    await tab.close();
    await takenOver;
    const next = await asking('ask');
    t.same(await until(other, 1), [{ title: 'echo-both is waiting for you', body: 'Which city should I use?', tag: tag(next, 1) }], 'told once, by the tab that took over, and nothing of before');
    t.same(await shown(other), await until(other, 1), 'the other tab told nothing before it took over');
    await made.close();
    for (const job of [twice, third, one, next]) await client.request('jobs/cancel', { job_id: job.job_id });
  });
}
