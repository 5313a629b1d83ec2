// `skillctl web --open` (docs/web.md): the browser is started with the path of a private file that
// sends it on to the address, never with the address itself, whose token `ps` shows every local
// user. A stand-in xdg-open on PATH records what it was given; the browser, when there is one,
// follows the file it was given to the page.
import t from 'tap';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { TestDaemon, waitForFile } from '../helpers/daemon.js';
import { launchBrowser, NO_BROWSER, startWeb } from '../helpers/web.js';

/** Records its arguments (NUL-separated), and the text and modes of the file it was given, then exits as xdg-open does. */
const FAKE_XDG_OPEN = `#!/bin/sh
out="$SKILLD_TEST_XDG_OPEN_RECORD"
mkdir "$out.tmp"
printf '%s\\0' "$@" > "$out.tmp/argv"
cat "$1" > "$out.tmp/page.html"
stat -c '%a' "$1" > "$out.tmp/mode"
stat -c '%a' "$(dirname "$1")" > "$out.tmp/folder-mode"
mv "$out.tmp" "$out"
`;

const daemon = await TestDaemon.start();
const dir = await mkdtemp(join(tmpdir(), 'skilld-test-open-'));
t.teardown(async () => {
  await daemon.cleanup();
  await rm(dir, { recursive: true, force: true });
});

t.test('--open hands xdg-open a 0600 file that leads to the address; the token is on no command line; the file goes when the page stops', async (t) => {
  const bin = join(dir, 'bin');
  const runtime = join(dir, 'runtime');
  const record = join(dir, 'record');
  await mkdir(bin);
  await mkdir(runtime);
  await chmod(runtime, 0o700);
  await writeFile(join(bin, 'xdg-open'), FAKE_XDG_OPEN, { mode: 0o755 });
  const env = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, XDG_RUNTIME_DIR: runtime, SKILLD_TEST_XDG_OPEN_RECORD: record };
  const web = await startWeb(daemon.socket, ['--open'], env);
  t.teardown(() => web.stop());

  const argv = (await waitForFile(join(record, 'argv'))).split('\0').slice(0, -1);
  t.equal(argv.length, 1, 'one argument: the file');
  const [file = ''] = argv;
  t.notOk(argv.join(' ').includes(web.token), "the token is not in xdg-open's command line");
  t.notOk((await readFile(`/proc/${web.child.pid}/cmdline`, 'utf8')).includes(web.token), "nor in skillctl web's own");
  t.equal(dirname(dirname(file)), runtime, 'in a folder of its own under XDG_RUNTIME_DIR');
  t.equal(await readFile(join(record, 'mode'), 'utf8'), '600\n', 'the file: its owner reads it, nobody else');
  t.equal(await readFile(join(record, 'folder-mode'), 'utf8'), '700\n', 'its folder: its owner only');
  const page = await readFile(join(record, 'page.html'), 'utf8');
  t.ok(page.includes(`<meta http-equiv="refresh" content="0;url=${web.url}">`), `a refresh to the address: ${page}`);
  t.ok(page.includes(`location.replace(${JSON.stringify(web.url)})`), 'the same by script');
  t.ok(existsSync(file), 'the file is there while the browser may still read it');

  if (NO_BROWSER === false) {
    // The same file, opened in a browser: it arrives at the page, signed in.
    const browser = await launchBrowser();
    t.teardown(() => browser.close());
    const tab = await browser.newPage();
    await tab.goto(`file://${join(record, 'page.html')}`);
    await tab.waitForURL(`${web.origin}/`);
    await tab.getByRole('heading', { name: 'Jobs' }).waitFor();
  } else t.comment(`not followed in a browser: ${NO_BROWSER}`);

  console.error('stop', web.child.pid);
  await web.stop();
  console.error('stopped');
  t.notOk(existsSync(file), 'removed when the page stopped');
  t.same(await readdir(runtime), [], 'its folder too');
});
