// What the page shows of a skill, an agent or an engine (docs/web.md): every such text goes through
// skillctl's own escaping (clients/terminal-text.ts), so an escape sequence or a bidi override in a
// skill's name, description, warnings or schema, in an agent's question or its options, or in an
// error, shows as `\x1b` or `\u202e` and acts on nothing. Real browser, real daemon, fake engine.
import t, { type Test } from 'tap';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { terminalText } from '../../clients/terminal-text.js';
import { TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { keepFailedPages, launchBrowser, NO_BROWSER, signedIn, startWeb } from '../helpers/web.js';

/** A red colour and a right-to-left override, as a skill may carry them. */
const RED = '\x1b[31m';
const RLO = '\u202e';

/** A description with both, and right-to-left text whose mark (U+200F) skillctl keeps: the page shows it as skillctl does. */
const DESCRIPTION = `Reads${RED} red ${RLO}evil text, \u05e2\u05d1\u05e8\u05d9\u05ea\u200f.`;

/** Any character the escaping shows as an escape, left as it is: none may reach the page. */
const RAW = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

if (NO_BROWSER !== false) {
  t.plan(0, `the page's text in a browser: ${NO_BROWSER}`);
} else {
  await suite();
}

async function suite(): Promise<void> {
  const skills = await mkdtemp(join(tmpdir(), 'skilld-test-web-text-'));
  await cp(TEST_SKILLS, skills, { recursive: true });
  await hostileSkill(join(skills, 'hostile-text'));
  // A skill whose runner.json names another id: invalid, with that id in its error's message.
  await mkdir(join(skills, 'broken-text', 'assets'), { recursive: true });
  await writeFile(join(skills, 'broken-text', 'SKILL.md'), '# broken-text\n');
  await writeFile(join(skills, 'broken-text', 'assets', 'runner.json'), JSON.stringify({ id: `broken${RED}${RLO}`, version: '1.0.0', execution_modes: ['auto'] }));
  const daemon = await TestDaemon.start({ skillsDirs: [skills] });
  const client = await daemon.client();
  const web = await startWeb(daemon.socket);
  const browser = await launchBrowser();
  t.teardown(async () => {
    await browser.close();
    await web.stop();
    await daemon.cleanup();
    await rm(skills, { recursive: true, force: true });
  });
  const follow = keepFailedPages(t);

  /** A page signed in through the printed address, then at `place`, loaded afresh. */
  async function opened(place: string): Promise<Page> {
    return signedIn(await browser.newPage(), web, follow, place);
  }

  /** The text of `where`, which must hold each of `escaped` and no raw control character. */
  async function shownEscaped(t: Test, where: Locator, escaped: string[]): Promise<void> {
    const text = (await where.textContent()) ?? '';
    for (const part of escaped) t.ok(text.includes(part), `shows ${JSON.stringify(part)}: ${JSON.stringify(text)}`);
    t.notOk(RAW.test(text), `no raw control character: ${JSON.stringify(text)}`);
  }

  t.test("the skills: a skill's name, description and warnings, and another's error, shown escaped", async (t) => {
    const tab = await opened('/skills');
    const card = tab.locator('li[data-skill="hostile-text"]');
    await card.locator('.badge').getByText('ok').waitFor();
    await shownEscaped(t, card.locator('h2'), ['Hostile\\x1b[31m name\\u202e']);
    await shownEscaped(t, card, ['Reads\\x1b[31m red \\u202eevil text', 'version 1.0\\x1b[31m', 'unknown key "note\\x1b[31m\\u202e"']);
    await shownEscaped(t, card, [terminalText(DESCRIPTION)]);
    const broken = tab.locator('li[data-skill="broken-text"]');
    await broken.locator('.badge').getByText('invalid').waitFor();
    await shownEscaped(t, broken.locator('[role="alert"]'), ['SKILL_MANIFEST_INVALID', 'broken\\x1b[31m\\u202e']);
    await shownEscaped(t, tab.locator('main'), []);
    await tab.close();
  });

  t.test("a skill's form: its input schema's titles, descriptions and choices shown escaped", async (t) => {
    const tab = await opened('/skills/hostile-text/run');
    await tab.getByRole('heading', { name: /^Start a job of Hostile/ }).waitFor();
    await shownEscaped(t, tab.locator('main h1'), ['Hostile\\x1b[31m name\\u202e']);
    await shownEscaped(t, tab.locator('label[for="input-city"]'), ['City\\x1b[31m \\u202eright']);
    await shownEscaped(t, tab.locator('#input-city-help'), ['Where\\x1b[31m to \\u202ego']);
    t.same(await tab.locator('#input-color option').allTextContents(), ['(none)', 'red\\x1b[31m', '\\u202eblue']);
    await shownEscaped(t, tab.locator('main'), []);
    await tab.close();
  });

  t.test("an agent's question and its options shown escaped, once: in the form while it is open", async (t) => {
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'hostile_ask' } });
    await waitForStatus(client, job.job_id, ['waiting_user']);
    const tab = await opened(`/jobs/${job.job_id}`);
    const form = tab.locator('section.question');
    await form.getByRole('radio').first().waitFor();
    await shownEscaped(t, form.locator('pre.prompt'), ['Which city\\x1b[2J\\x1b]0;owned\\x07 should I\\x0d use \\x9b31m\\u202eevil\\u202c?']);
    await shownEscaped(t, form.locator('label.option').first(), ['Paris\\x1b[8m hidden\\x1b[28m']);
    t.equal(await tab.locator('.conversation .question').count(), 0, 'the open question is shown once: in its form, not in the conversation too');
    await shownEscaped(t, tab.locator('main'), ['\\u202eevil', 'clear\\x1b[2J']);
    await shownEscaped(t, tab.locator('main'), []);
    t.equal(await tab.locator('.job-head dt:text-is("Owner") + dd').textContent(), userInfo().username, 'the job view names its owner');
    await tab.locator('details.request summary').click();
    t.match(await tab.locator('details.request pre').first().textContent(), /hostile_ask/, 'and shows what it was asked');
    await client.request('jobs/cancel', { job_id: job.job_id });
    await tab.close();
  });
}

/** A skill whose name, description, version, an unknown key and input schema carry a colour and a bidi override. */
async function hostileSkill(folder: string): Promise<void> {
  await mkdir(join(folder, 'assets'), { recursive: true });
  await writeFile(join(folder, 'SKILL.md'), '# hostile-text\n\nReturn a JSON object with a `greeting`.\n');
  const runner = { id: 'hostile-text', version: `1.0${RED}`, name: `Hostile${RED} name${RLO}`, description: DESCRIPTION, execution_modes: ['auto'], [`note${RED}${RLO}`]: true };
  await writeFile(join(folder, 'assets', 'runner.json'), JSON.stringify(runner));
  const input = {
    type: 'object',
    properties: {
      city: { type: 'string', title: `City${RED} ${RLO}right`, description: `Where${RED} to ${RLO}go` },
      color: { title: 'Colour', enum: [`red${RED}`, `${RLO}blue`] },
    },
  };
  await writeFile(join(folder, 'assets', 'input.schema.json'), JSON.stringify(input));
  await writeFile(join(folder, 'assets', 'output.schema.json'), JSON.stringify({ type: 'object', required: ['greeting'], properties: { greeting: { type: 'string' } } }));
}
