import t from 'tap';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openFileBase, openInBrowser, redirectPage, writeOpenFile } from '../../clients/web/open-file.js';

const base = await mkdtemp(join(tmpdir(), 'skilld-test-open-file-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

t.test('the page refreshes to the address and goes there by script; nothing in the address can end an attribute or the script', async (t) => {
  const url = 'http://127.0.0.1:8421/?token=abc_-XYZ';
  const page = redirectPage(url);
  t.match(page, `<meta http-equiv="refresh" content="0;url=${url}">`);
  t.match(page, `<a href="${url}">`);
  t.match(page, `<script>location.replace("${url}");</script>`);
  const hostile = redirectPage('http://h/?a="><script>x</script>&b=\'');
  t.notMatch(hostile, '"><script>x', 'the quote ends no attribute');
  t.match(hostile, 'content="0;url=http://h/?a=&#34;&#62;&#60;script&#62;x&#60;/script&#62;&#38;b=&#39;"');
  t.match(hostile, 'location.replace("http://h/?a=\\">\\u003cscript>x\\u003c/script>&b=\'")', 'no </script> inside the script');
});

t.test('the file: 0600 in a new folder of 0700 under the base, removed with its folder', async (t) => {
  const file = await writeOpenFile('http://127.0.0.1:1/?token=t', base);
  t.equal(dirname(dirname(file.path)), base);
  t.equal((await stat(file.path)).mode & 0o777, 0o600);
  t.equal((await stat(dirname(file.path))).mode & 0o777, 0o700);
  t.equal(await readFile(file.path, 'utf8'), redirectPage('http://127.0.0.1:1/?token=t'));
  await file.remove();
  t.notOk(existsSync(dirname(file.path)));
  await file.remove();
  t.pass('removing it again does nothing');
});

t.test('the base: XDG_RUNTIME_DIR when it is an absolute path, else the temp folder', async (t) => {
  t.equal(openFileBase({ XDG_RUNTIME_DIR: '/run/user/1000' }), '/run/user/1000');
  t.equal(openFileBase({ XDG_RUNTIME_DIR: 'relative' }), tmpdir());
  t.equal(openFileBase({}), tmpdir());
});

t.test('without xdg-open: a warning, and the file is gone at once', async (t) => {
  const runtime = await mkdtemp(join(base, 'runtime-'));
  const saved = { PATH: process.env['PATH'], XDG_RUNTIME_DIR: process.env['XDG_RUNTIME_DIR'] };
  t.teardown(() => Object.assign(process.env, saved));
  process.env['PATH'] = await mkdtemp(join(base, 'empty-bin-'));
  process.env['XDG_RUNTIME_DIR'] = runtime;
  const warned = new Promise<string>((resolve) => void openInBrowser('http://127.0.0.1:1/?token=t', resolve));
  t.match(await warned, /^skillctl: cannot open a browser: spawn xdg-open ENOENT/);
  t.same(await readdir(runtime), []);
});
