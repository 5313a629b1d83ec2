// The web page (`skillctl web`, docs/web.md) in a real browser: Debian's chromium driven by
// playwright-core, against the real daemon with the fake engines. Each test awaits what the page
// shows; none times anything. Screenshots of the main views go to test-output/screenshots.
import t from 'tap';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { FIXTURES, TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';
import { daemonConnections, exchange, keepFailedPages, launchBrowser, NO_BROWSER, SCREENS, screenshot, signedIn, startWeb } from '../helpers/web.js';

/** What test/helpers/page-audit.js finds in a view: unnamed controls, text of low contrast. */
const audit = await readFile(join(import.meta.dirname, '..', 'helpers', 'page-audit.js'), 'utf8');

if (NO_BROWSER !== false) {
  t.plan(0, `the web page in a browser: ${NO_BROWSER}`);
} else {
  await suite();
}

async function suite(): Promise<void> {
  // A skills folder of the test's own, so that one skill can be broken on disk.
  const skills = await mkdtemp(join(tmpdir(), 'skilld-test-web-skills-'));
  await cp(TEST_SKILLS, skills, { recursive: true });
  await bookingSkill(join(skills, 'book-hotel'));
  // Claude Code in a live session asks for approvals (scenario approve with approvals ask).
  const config = { kill_grace_ms: 300, engines: { codex: { command: [join(FIXTURES, 'fake-codex.mjs')] }, claude: { command: [join(FIXTURES, 'fake-claude.mjs')], profile: 'sticky_process' } } };
  let daemon = await TestDaemon.start({ skillsDirs: [skills], config });
  let client = await daemon.client();
  const web = await startWeb(daemon.socket);
  const browser = await launchBrowser();
  t.teardown(async () => {
    await browser.close();
    await web.stop();
    await daemon.cleanup();
    await rm(skills, { recursive: true, force: true });
  });

  const follow = keepFailedPages(t);

  const create = (input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<JobView> =>
    client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', input, ...extra });
  const interactive = (scenario: string, extra: Record<string, unknown> = {}): Promise<JobView> => create({ scenario }, { execution_mode: 'interactive', ...extra });

  t.test('the printed address signs in, and the token leaves the address bar (the guard without a browser: web-guard.test.ts)', async (t) => {
    const tab = await opened();
    t.equal(tab.url(), `${web.origin}/`);
    await tab.getByRole('heading', { name: 'Jobs' }).waitFor();
    await tab.context().close();
  });

  t.test('the live list: jobs appear and move as their events arrive, waiting ones first; filters', async (t) => {
    const tab = await opened();
    await tab.getByRole('heading', { name: 'Jobs' }).waitFor();
    const asking = await interactive('ask');
    const row = tab.locator(`tr[data-job="${asking.job_id}"]`);
    await row.getByText('waiting for you').waitFor();
    const done = await create({ scenario: 'ok' });
    await tab.locator(`tr[data-job="${done.job_id}"]`).getByText('succeeded').waitFor();
    const first = await tab.locator('tbody tr').first().getAttribute('data-job');
    t.ok((await tab.locator('tbody tr').first().textContent())?.includes('waiting for you'), 'a waiting job heads the list');
    t.not(first, done.job_id);
    t.match(await row.textContent(), /echo-both.*codex/);
    await screenshot(tab, 'jobs');
    await tab.getByLabel('Status').selectOption('succeeded');
    await row.waitFor({ state: 'detached' });
    await tab.locator(`tr[data-job="${done.job_id}"]`).waitFor();
    // A job that moves out of the filter leaves the list as it moves.
    await tab.getByLabel('Status').selectOption('waiting_user');
    await row.waitFor();
    await client.request('jobs/reply', { job_id: asking.job_id, interaction_id: 1, response: 'paris' });
    await row.waitFor({ state: 'detached' });
    await tab.setViewportSize(SCREENS.phone);
    await tab.getByLabel('Status').selectOption('');
    await tab.locator(`tr[data-job="${done.job_id}"]`).waitFor();
    await screenshot(tab, 'jobs');
    await tab.context().close();
  });

  t.test('a list reads the jobs once its stream stands: a job made and ended while the stream was on its way is on it', async (t) => {
    // The list's stream held in the browser until the job has ended: every change of the job comes before the stream.
    let asked = (): void => undefined;
    const streamAsked = new Promise<void>((resolve) => (asked = resolve));
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const called: string[] = [];
    const tab = await opened('/', 'desktop', async (page) => {
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/rpc') called.push(String((request.postDataJSON() as { method?: unknown } | null)?.method));
      });
      await page.route('**/events', async (route) => {
        asked();
        await held;
        await route.continue();
      });
    });
    await streamAsked;
    const job = await create({ scenario: 'ok' });
    await waitForStatus(client, job.job_id);
    t.notOk(called.includes('jobs/list'), `no jobs read before the stream stands: ${called.join(', ')}`);
    release();
    await tab.locator(`tr[data-job="${job.job_id}"]`).getByText('succeeded').waitFor();
    await tab.context().close();
  });

  t.test('open lists share one daemon connection (a job view\'s own: web-guard.test.ts)', async (t) => {
    const first = await opened();
    const made = await create({ scenario: 'ok' });
    // A list shows a job once its stream stands (it reads the jobs only then): the list's connection is made.
    await first.locator(`tr[data-job="${made.job_id}"]`).waitFor();
    const holding = await daemonConnections(daemon.socket);
    const more = [await opened(), await opened()];
    const next = await create({ scenario: 'ok' });
    // Each list shows the job once its stream stands: the two more have joined the first's.
    for (const tab of [first, ...more]) await tab.locator(`tr[data-job="${next.job_id}"]`).waitFor();
    t.equal(await daemonConnections(daemon.socket), holding, 'three open lists hold the connections one did');
    for (const tab of [first, ...more]) await tab.context().close();
  });

  t.test('a choice: the labels shown, the value of the one picked sent by keyboard; the job goes on', async (t) => {
    const job = await interactive('ask');
    await waitForStatus(client, job.job_id, ['waiting_user']);
    const tab = await opened(`/jobs/${job.job_id}`);
    const form = tab.locator('section.question');
    await form.getByText('Which city should I use?').waitFor();
    t.equal(await form.getByRole('radio').count(), 2);
    await tab.locator('.conversation .agent').getByText('I need one detail').waitFor();
    t.equal((await tab.locator('main').innerText()).split('Which city should I use?').length - 1, 1, 'the open question is shown once, in its form');
    await screenshot(tab, 'job-question');
    await tab.setViewportSize(SCREENS.phone);
    await screenshot(tab, 'job-question');
    // The keyboard alone: focus the first option, move to the second, send with Enter.
    await form.getByRole('radio', { name: 'Paris' }).focus();
    await tab.keyboard.press('ArrowDown');
    t.ok(await form.getByRole('radio', { name: 'Rome' }).isChecked());
    await tab.keyboard.press('Enter');
    await tab.locator('.badge[role="status"]').getByText('succeeded').waitFor();
    await form.waitFor({ state: 'detached' });
    t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { reply: 'rome' } });
    await tab.locator('.conversation .reply').getByText('rome').waitFor();
    t.equal(await tab.locator('.conversation .question .who').first().textContent(), 'The agent asks a choice', 'its kind in words');
    t.equal((await tab.locator('main').innerText()).split('Which city should I use?').length - 1, 1, 'answered, the question is shown once, in the conversation');
    await tab.getByRole('heading', { name: 'Result' }).waitFor();
    t.ok((await tab.locator('dl.output dt').allTextContents()).includes('reply'), 'the output, field by field');
    t.match(await tab.locator('dl.output').innerText(), /reply\s+rome/);
    await tab.context().close();
  });

  t.test("a result's text is shown as text: its line breaks as breaks, never an escaped \\n; a list of texts as a list", async (t) => {
    const job = await create({ scenario: 'ok', emit: { greeting: 'first line\nsecond line', points: ['one', 'two'], meta: { n: 1 } } });
    await waitForStatus(client, job.job_id);
    const tab = await opened(`/jobs/${job.job_id}`);
    await tab.getByRole('heading', { name: 'Result' }).waitFor();
    const greeting = tab.locator('dl.output dd').first();
    t.equal(await greeting.innerText(), 'first line\nsecond line', 'two lines on the page');
    t.notMatch(await tab.locator('dl.output').textContent(), /\\n/, 'no escaped line break');
    t.same(await tab.locator('dl.output dd ul li').allTextContents(), ['one', 'two']);
    t.match(await tab.locator('dl.output dd pre').textContent(), /"n": 1/, 'an object inside: JSON, laid out');
    await tab.context().close();
  });

  t.test('free text is sent as written; a confirm question is yes or no', async (t) => {
    const plain = await interactive('ask_plain');
    await waitForStatus(client, plain.job_id, ['waiting_user']);
    const tab = await opened(`/jobs/${plain.job_id}`);
    await tab.getByLabel('Your answer').fill('Lisbon, by the river');
    await tab.getByRole('button', { name: 'Send' }).click();
    await tab.locator('.badge[role="status"]').getByText('succeeded').waitFor();
    t.match(await client.request('jobs/result', { job_id: plain.job_id }), { output: { reply: 'Lisbon, by the river' } });
    // The end of what the agent said in the last turn, read when opened.
    await tab.getByText(/^Log of turn 2/).click();
    await tab.locator('pre.log').getByText('Lisbon, by the river').waitFor();

    const confirm = await interactive('ask_confirm');
    await waitForStatus(client, confirm.job_id, ['waiting_user']);
    await tab.goto(`${web.origin}/#/jobs/${confirm.job_id}`);
    await tab.locator('section.question').getByText('Shall I book it?').waitFor();
    await tab.getByRole('button', { name: 'Yes' }).click();
    await tab.locator('.badge[role="status"]').getByText('succeeded').waitFor();
    t.match(await client.request('jobs/result', { job_id: confirm.job_id }), { output: { reply: 'yes' } });
    await tab.context().close();
  });

  t.test('an approval shows the command in full; allowed it runs, denied it does not', async (t) => {
    const answers = { Allow: true, Deny: false } as const;
    for (const [button, approved] of Object.entries(answers)) {
      const job = await interactive('approve', { engine: 'claude', approvals: 'ask' });
      await waitForStatus(client, job.job_id, ['waiting_user']);
      const tab = await opened(`/jobs/${job.job_id}`);
      const form = tab.locator('section.question');
      await form.getByRole('heading', { name: 'The agent asks for approval' }).waitFor();
      t.match(await form.locator('.approval-summary').textContent(), /command.*touch approved\.txt/);
      t.match(await form.locator('pre.request').textContent(), /touch approved\.txt/);
      if (approved) await screenshot(tab, 'job-approval');
      await form.getByRole('button', { name: button }).click();
      await tab.locator('.badge[role="status"]').getByText('succeeded').waitFor();
      t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { approved } });
      t.equal(existsSync(join(daemon.runDir(job.job_id), 'workspace', 'approved.txt')), approved);
      await tab.context().close();
    }
  });

  t.test('a question answered from skillctl meanwhile leaves the form; a stale answer gets the daemon\'s error', async (t) => {
    const job = await interactive('ask');
    await waitForStatus(client, job.job_id, ['waiting_user']);
    const live = await opened(`/jobs/${job.job_id}`);
    // A second page that hears nothing more from the daemon keeps the old question up.
    const stale = await opened(`/jobs/${job.job_id}`, 'desktop', (page) => page.route('**/events**', (route) => route.abort()));
    await live.locator('section.question').waitFor();
    await stale.locator('section.question').waitFor();
    const replied = await runSkillctl(['reply', job.job_id, '2', '--socket', daemon.socket], process.env);
    t.equal(replied.code, 0, replied.stderr);
    await live.locator('section.question').waitFor({ state: 'detached' });
    await live.locator('.badge[role="status"]').getByText('succeeded').waitFor();
    await stale.getByRole('radio', { name: 'Paris' }).check();
    await stale.getByRole('button', { name: 'Send' }).click();
    const alert = stale.locator('section.question [role="alert"]');
    await alert.waitFor();
    t.match(await alert.textContent(), /JOB_NOT_WAITING/);
    t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { reply: 'rome' } });
    await live.context().close();
    await stale.context().close();
  });

  t.test('cancel asks first; kept, the job runs on; confirmed, it ends canceled', async (t) => {
    const job = await create({ scenario: 'hang' });
    await waitForStatus(client, job.job_id, ['running']);
    const tab = await opened(`/jobs/${job.job_id}`);
    await tab.getByRole('button', { name: 'Cancel job' }).click();
    const dialog = tab.getByRole('dialog');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Keep it running' }).click();
    await dialog.waitFor({ state: 'hidden' });
    t.equal((await client.request<JobView>('jobs/get', { job_id: job.job_id })).status, 'running');
    await tab.getByRole('button', { name: 'Cancel job' }).click();
    await dialog.getByRole('button', { name: 'Cancel the job' }).click();
    await tab.locator('.badge[role="status"]').getByText('canceled').waitFor();
    await tab.locator('.job-head [role="alert"]').getByText('CANCELED').waitFor();
    t.equal((await client.request<JobView>('jobs/get', { job_id: job.job_id })).status, 'canceled');
    // Retry: a new job with the same request, shown at once.
    await tab.getByRole('button', { name: 'Retry' }).click();
    await dialog.getByRole('button', { name: 'Start a new job' }).click();
    await tab.waitForURL((url) => url.hash.startsWith('#/jobs/') && !url.hash.endsWith(job.job_id));
    const retried = decodeURIComponent(new URL(tab.url()).hash.slice('#/jobs/'.length));
    t.match(await client.request('jobs/get', { job_id: retried }), { skill_id: 'echo-both' });
    await client.request('jobs/cancel', { job_id: retried });
    await tab.context().close();
    const missing = await opened('/jobs/job-0000000000-none');
    await missing.locator('[role="alert"]').getByText('JOB_NOT_FOUND').waitFor();
    await missing.context().close();
  });

  t.test('an artifact downloads through the daemon; a link leading out is neither listed nor served', async (t) => {
    const job = await create({ scenario: 'links' });
    await waitForStatus(client, job.job_id);
    const tab = await opened(`/jobs/${job.job_id}`);
    const link = tab.getByRole('link', { name: 'report.txt' });
    await link.waitFor();
    t.equal(await tab.getByRole('link', { name: 'leak.txt' }).count(), 0);
    const [download] = await Promise.all([tab.waitForEvent('download'), link.click()]);
    t.equal(download.suggestedFilename(), 'report.txt');
    const saved = await download.path();
    const original = await readFile(join(daemon.runDir(job.job_id), 'workspace', 'artifacts', 'report.txt'), 'utf8');
    t.equal(await readFile(saved, 'utf8'), original);
    const cookie = `${(await tab.context().cookies())[0]?.name}=${web.token}`;
    const leak = await exchange(web.port, `/artifact?job_id=${job.job_id}&path=leak.txt`, { headers: { Host: `127.0.0.1:${web.port}`, Cookie: cookie } });
    t.equal(leak.status, 404);
    t.match(JSON.parse(leak.body), { error: { code: 'ARTIFACT_NOT_FOUND' } });
    // A file of several of jobs/artifact's 256 KiB chunks comes whole, with its name as it is.
    const big = 'abcdefghij\n'.repeat(60_000);
    await writeFile(join(daemon.runDir(job.job_id), 'workspace', 'artifacts', "it's big (1).txt"), big);
    const whole = await exchange(web.port, `/artifact?job_id=${job.job_id}&path=${encodeURIComponent("it's big (1).txt")}`, { headers: { Host: `127.0.0.1:${web.port}`, Cookie: cookie } });
    t.equal(whole.status, 200);
    t.equal(whole.headers['content-length'], String(big.length));
    t.equal(whole.headers['content-disposition'], "attachment; filename*=UTF-8''it%27s%20big%20%281%29.txt");
    t.ok(whole.body === big, 'the same bytes');
    await tab.context().close();
  });

  t.test("a skill's form: a field for each property, the daemon's complaint at its field, then the job", async (t) => {
    const tab = await opened('/skills/book-hotel/run');
    await tab.getByRole('heading', { name: 'Start a job of Book a hotel' }).waitFor();
    t.equal(await tab.getByLabel(/^City/).getAttribute('required'), '');
    t.equal(await tab.getByLabel('Nights').getAttribute('type'), 'number');
    t.equal(await tab.getByLabel('Nights').inputValue(), '2', 'the default');
    t.equal(await tab.getByLabel('Breakfast').getAttribute('type'), 'checkbox');
    t.same(await tab.getByLabel('Room').locator('option').allTextContents(), ['(none)', 'single', 'double']);
    t.match(await tab.locator('#input-city-help').textContent(), /capital/);
    // What the browser lets through and the schema does not: the daemon's INPUT_INVALID, at the field.
    await tab.getByLabel(/^City/).fill('lisbon');
    await tab.getByRole('button', { name: 'Start the job' }).click();
    await tab.locator('#input-city-error').waitFor();
    t.match(await tab.locator('[role="alert"]').first().textContent(), /INPUT_INVALID/);
    t.equal(await tab.getByLabel(/^City/).getAttribute('aria-invalid'), 'true');
    await screenshot(tab, 'skill-run');
    await tab.getByLabel(/^City/).fill('Lisbon');
    await tab.getByLabel('Breakfast').check();
    await tab.getByLabel('Room').selectOption('double');
    await tab.getByRole('button', { name: 'Start the job' }).click();
    await tab.locator('.badge[role="status"]').getByText('succeeded').waitFor();
    const jobId = decodeURIComponent(new URL(tab.url()).hash.slice('#/jobs/'.length));
    t.match(await client.request('jobs/get', { job_id: jobId }), { skill_id: 'book-hotel', engine: 'codex' });
    const calls = await readFile(join(daemon.runDir(jobId), 'workspace', '.fake-engine', 'calls.ndjson'), 'utf8');
    t.match(calls, /Lisbon/);
    t.match(calls, /double/);
    await tab.context().close();
  });

  t.test("a skill's form offers only the engines that can run, the daemon's choice first; a place the page does not have says so", async (t) => {
    const { engines } = await client.request<{ engines: Array<{ name: string; available: boolean; reason: string | null }> }>('engines/list');
    const runnable = ['codex', 'gemini', 'iflow', 'claude'].filter((name) => engines.some((one) => one.name === name && one.available && one.reason === null));
    const tab = await opened('/skills/echo-auto');
    await tab.getByRole('heading', { name: /^Start a job of/ }).waitFor();
    // The heading may come before the daemon's answer about the engines: their options are awaited.
    await tab.getByLabel('Engine').locator('option').first().waitFor({ state: 'attached' });
    t.same(await tab.getByLabel('Engine').locator('option').allTextContents(), runnable, 'the engines engines/list says can run, and no other');
    t.equal(await tab.getByLabel('Engine').inputValue(), 'codex', "the skill's default_engine");
    await tab.evaluate("location.hash = '#/no/such/place'");
    await tab.getByRole('heading', { name: 'Not found' }).waitFor();
    t.match(await tab.locator('main').textContent(), /no place #\/no\/such\/place/);
    await tab.locator('main').getByRole('link', { name: 'skills' }).click();
    await tab.getByRole('heading', { name: 'Skills' }).waitFor();
    await tab.context().close();
  });

  t.test('a skill broken on disk shows its error on the open page, and mended, its state', async (t) => {
    const tab = await opened('/skills');
    const card = tab.locator('li[data-skill="echo-auto"]');
    await card.locator('.badge').getByText('ok').waitFor();
    const runner = join(skills, 'echo-auto', 'assets', 'runner.json');
    const good = await readFile(runner, 'utf8');
    await writeFile(runner, '{ "id": "echo-auto", ');
    await card.locator('.badge').getByText('invalid').waitFor();
    t.match(await card.locator('[role="alert"]').textContent(), /SKILL_MANIFEST_INVALID/);
    await screenshot(tab, 'skills');
    await tab.setViewportSize(SCREENS.phone);
    await screenshot(tab, 'skills');
    await writeFile(runner, good);
    await card.locator('.badge').getByText('ok').waitFor();
    await tab.context().close();
  });

  t.test('every control has a name, and text contrasts with its background (4.5:1) in every view', async (t) => {
    const asking = await interactive('ask');
    await waitForStatus(client, asking.job_id, ['waiting_user']);
    for (const place of ['/', `/jobs/${asking.job_id}`, '/skills', '/skills/echo-both/run']) {
      const tab = await opened(place);
      await tab.locator('main h1').waitFor();
      await tab.locator('main :is(table, .conversation, .skills, form.run)').first().waitFor();
      const { unnamed, lowContrast } = await tab.evaluate<{ unnamed: string[]; lowContrast: string[] }>(audit);
      t.same(unnamed, [], `${place}: controls without a name`);
      t.same(lowContrast, [], `${place}: text below 4.5:1`);
      await tab.context().close();
    }
    await client.request('jobs/cancel', { job_id: asking.job_id });
  });

  t.test('the daemon restarting under an open page: it says so, then goes on, and a reply lands', async (t) => {
    const job = await interactive('ask');
    await waitForStatus(client, job.job_id, ['waiting_user']);
    const tab = await opened(`/jobs/${job.job_id}`);
    await tab.locator('section.question').waitFor();
    const list = await opened('/');
    await list.locator(`tr[data-job="${job.job_id}"]`).waitFor();
    await daemon.stop();
    await tab.getByRole('status').getByText('The daemon does not answer').waitFor();
    const cookie = `${(await tab.context().cookies())[0]?.name}=${web.token}`;
    const away = await exchange(web.port, '/rpc', { method: 'POST', headers: { Host: `127.0.0.1:${web.port}`, Cookie: cookie, Origin: web.origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ method: 'daemon/status' }) });
    t.equal(away.status, 503);
    t.match(JSON.parse(away.body), { error: { code: 'DAEMON_UNREACHABLE' } });
    await list.getByText('The daemon does not answer').waitFor();
    // A list opened while the daemon is away: its skill filter has nothing to offer yet.
    const late = await opened('/');
    await late.getByText('The daemon does not answer').waitFor();
    daemon = await TestDaemon.start({ dir: daemon.dir, skillsDirs: [skills], config });
    client = await daemon.client();
    await tab.getByText('The daemon does not answer').waitFor({ state: 'detached' });
    await late.locator('label', { hasText: 'Skill' }).locator('option', { hasText: /^echo-auto$/ }).waitFor({ state: 'attached' });
    t.pass('the skill filter of a list opened while the daemon was away fills once it is back');
    await late.context().close();
    await tab.getByRole('radio', { name: 'Paris' }).check();
    await tab.getByRole('button', { name: 'Send' }).click();
    await tab.locator('.badge[role="status"]').getByText('succeeded').waitFor();
    t.match(await client.request('jobs/result', { job_id: job.job_id }), { output: { reply: 'paris' } });
    // The list heard the job move after the restart too.
    await list.locator(`tr[data-job="${job.job_id}"]`).getByText('succeeded').waitFor();
    await list.context().close();
    await tab.context().close();
  });

  /** A new browser context signed in through the printed address, at `place` (a route of the page); `prepare` runs on the page first. */
  async function opened(place = '/', screen: keyof typeof SCREENS = 'desktop', prepare?: (page: Page) => Promise<unknown>): Promise<Page> {
    const context = await browser.newContext({ viewport: SCREENS[screen], acceptDownloads: true });
    const page = await context.newPage();
    await prepare?.(page);
    return signedIn(page, web, follow, place);
  }
}

/** A skill whose input has a field of each kind the form makes: text with a pattern the browser does not check, a number with a default, a yes/no, a choice. */
async function bookingSkill(folder: string): Promise<void> {
  await mkdir(join(folder, 'assets'), { recursive: true });
  await writeFile(join(folder, 'SKILL.md'), '# book-hotel\n\nBook a hotel room as the input says and return a JSON object with a `greeting`.\n');
  await writeFile(join(folder, 'assets', 'runner.json'), JSON.stringify({ id: 'book-hotel', version: '1.0.0', name: 'Book a hotel', description: 'Books a room.', execution_modes: ['auto'] }));
  const input = {
    type: 'object',
    required: ['city'],
    properties: {
      city: { type: 'string', title: 'City', pattern: '^[A-Z]', description: 'The city, with a capital letter.' },
      nights: { type: 'integer', title: 'Nights', minimum: 1, maximum: 30, default: 2 },
      breakfast: { type: 'boolean', title: 'Breakfast' },
      room: { title: 'Room', enum: ['single', 'double'] },
    },
    additionalProperties: false,
  };
  await writeFile(join(folder, 'assets', 'input.schema.json'), JSON.stringify(input));
  await writeFile(join(folder, 'assets', 'output.schema.json'), JSON.stringify({ type: 'object', required: ['greeting'], properties: { greeting: { type: 'string' } } }));
}
