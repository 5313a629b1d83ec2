// `skillctl web --port N` keeps its token (docs/web.md, "The kept token"): the same address and
// the same signed-in browser after a restart; `--new-token` replaces it; a token file that is not
// the user's alone is refused with exit 1. Without a browser over HTTP, then in one when there is.
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKILLCTL_BIN, TestDaemon, type JobView } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';
import { exchange, freePort, keepFailedPages, launchBrowser, NO_BROWSER, signedIn, signIn, startWeb, type WebPage } from '../helpers/web.js';

const daemon = await TestDaemon.start();
const client = await daemon.client();
const state = await mkdtemp(join(tmpdir(), 'skilld-test-web-token-'));
const env = { ...process.env, XDG_STATE_HOME: state };
t.teardown(async () => {
  await daemon.cleanup();
  await rm(state, { recursive: true, force: true });
});

/** The page on `port` with the test's state folder. */
const start = (port: number, ...args: string[]): Promise<WebPage> => startWeb(daemon.socket, ['--port', String(port), ...args], env);
const page = (web: WebPage, cookie: string): Promise<number> => exchange(web.port, '/', { headers: { Host: `127.0.0.1:${web.port}`, Cookie: cookie } }).then((answer) => answer.status);

t.test('a fixed port keeps its token: the same address after a restart, and the cookie of a browser signed in before still good', async (t) => {
  const port = await freePort();
  const first = await start(port);
  const file = join(state, 'skilld', `web-${port}.token`);
  t.equal(first.tokenFile, file);
  t.equal(await readFile(file, 'utf8'), `${first.token}\n`);
  t.equal((await stat(file)).mode & 0o777, 0o600);
  t.equal((await stat(join(state, 'skilld'))).mode & 0o777, 0o700);
  const cookie = await signIn(first);
  t.equal(await page(first, cookie), 200);
  await first.stop();

  const again = await start(port);
  t.equal(again.url, first.url, 'the address printed is the one printed before');
  t.equal(await page(again, cookie), 200, 'the cookie set before the restart signs in still');
  await again.stop();

  const renewed = await start(port, '--new-token');
  t.teardown(() => renewed.stop());
  t.not(renewed.token, first.token);
  t.equal(await readFile(file, 'utf8'), `${renewed.token}\n`, 'the new token is kept in its place');
  t.equal(await page(renewed, cookie), 401, 'a browser signed in with the old token is signed out');
  t.equal((await exchange(port, `/?token=${first.token}`, { headers: { Host: `127.0.0.1:${port}` } })).status, 401, 'the old address is refused');
  t.equal(await page(renewed, await signIn(renewed)), 200);
  t.same(await readdir(join(state, 'skilld')), [`web-${port}.token`], 'no temp file left behind');
});

t.test('printed for a person: the address, and where its token is kept', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [SKILLCTL_BIN, 'web', '--port', String(port), '--socket', daemon.socket], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const lines: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    lines.push(line);
    if (line.startsWith('(')) break;
  }
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  t.same(await exited, [0, null]);
  const token = (await readFile(join(state, 'skilld', `web-${port}.token`), 'utf8')).trim();
  t.same(lines, [
    `skillctl web: the page of the daemon at ${daemon.socket}:`,
    `  http://127.0.0.1:${port}/?token=${token}`,
    `(the address holds the page's token, kept in ${join(state, 'skilld', `web-${port}.token`)} for the next start on this port; Ctrl-C stops the page)`,
  ]);
});

t.test('without --port each start has a new token, kept nowhere; --new-token needs --port', async (t) => {
  const before = await readdir(join(state, 'skilld')).catch(() => []);
  const one = await startWeb(daemon.socket, [], env);
  await one.stop();
  const two = await startWeb(daemon.socket, [], env);
  await two.stop();
  t.not(one.token, two.token);
  t.equal(one.tokenFile, null);
  t.same(await readdir(join(state, 'skilld')).catch(() => []), before, 'no file written');
  const bare = await runSkillctl(['web', '--new-token', '--socket', daemon.socket], env);
  t.equal(bare.code, 2);
  t.match(bare.stderr, /--new-token needs --port N/);
});

t.test('a token file that is a link, or that others may read, is refused with exit 1; nothing listens after', async (t) => {
  const port = await freePort();
  const file = join(state, 'skilld', `web-${port}.token`);
  const target = join(state, 'elsewhere');
  await writeFile(target, `${'x'.repeat(32)}\n`, { mode: 0o600 });
  await symlink(target, file);
  const linked = await runSkillctl(['web', '--port', String(port), '--socket', daemon.socket], env);
  t.equal(linked.code, 1);
  t.equal(linked.stderr, `skillctl: refusing the token file ${file}: it is a symbolic link (never followed). Remove it, and skillctl web makes a new one\n`);
  t.equal(linked.stdout, '', 'no address printed');
  const asJson = await runSkillctl(['web', '--port', String(port), '--new-token', '--json', '--socket', daemon.socket], env);
  t.equal(asJson.code, 1);
  t.match(JSON.parse(asJson.stderr), { error: { code: 'CLIENT_ERROR', message: /symbolic link/ } });
  t.equal(await readFile(target, 'utf8'), `${'x'.repeat(32)}\n`, 'what the link leads to is untouched');
  await rm(file);
  await writeFile(file, `${'y'.repeat(32)}\n`, { mode: 0o644 });
  await chmod(file, 0o644);
  const readable = await runSkillctl(['web', '--port', String(port), '--socket', daemon.socket], env);
  t.equal(readable.code, 1);
  t.match(readable.stderr, /mode 0644 lets every user read it/);
  // The refused start let the port go: a start with the file mended listens there.
  await chmod(file, 0o600);
  const mended = await start(port);
  t.equal(mended.token, 'y'.repeat(32));
  await mended.stop();
});

t.test('a start that finds its port in use changes no kept token, --new-token or not', async (t) => {
  const port = await freePort();
  const running = await start(port);
  t.teardown(() => running.stop());
  const second = await runSkillctl(['web', '--port', String(port), '--new-token', '--socket', daemon.socket], env);
  t.equal(second.code, 1);
  t.match(second.stderr, /EADDRINUSE/);
  t.equal(await readFile(join(state, 'skilld', `web-${port}.token`), 'utf8'), `${running.token}\n`, 'the running page keeps its token, and the file with it');
});

t.test('in a browser: an open page signed in before a restart goes on after it, and a reload finds it signed in', { skip: NO_BROWSER }, async (t) => {
  const port = await freePort();
  let web = await start(port);
  t.teardown(() => web.stop());
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const follow = keepFailedPages(t);
  const tab = await signedIn(await browser.newPage(), web, follow);
  await tab.getByRole('heading', { name: 'Jobs' }).waitFor();
  await web.stop();
  // The line at the top (a call cut short by the stop may say PAGE_UNREACHABLE below it too).
  const away = tab.locator('p.banner', { hasText: 'The page’s server (skillctl web) does not answer' });
  await away.waitFor();
  web = await start(port);
  await away.waitFor({ state: 'detached' });
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} });
  await tab.locator(`tr[data-job="${job.job_id}"]`).getByText('succeeded').waitFor();
  const reloaded = await tab.reload();
  t.equal(reloaded?.status(), 200, 'the cookie of before the restart signs in');
  await tab.getByRole('heading', { name: 'Jobs' }).waitFor();
  await web.stop();
  web = await start(port, '--new-token');
  const refused = await tab.reload();
  t.equal(refused?.status(), 401, 'a new token signs the browser out');
});
