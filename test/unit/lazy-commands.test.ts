// skillctl's command table loads neither the MCP SDK nor the daemon's schema compiler: only
// `skillctl mcp` and `skillctl skills validate|new` need them, and every other command would pay
// for them at each start (about 30 MiB resident and half a second on a small machine). A file of
// its own (not lazy-driver's): the daemon loads Ajv, and a process cannot unload it.
import t from 'tap';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ajvLoaded = (): boolean => Object.keys(require.cache).some((path) => path.includes('/node_modules/ajv/'));

t.test('the command table loads without ajv; the MCP server loads it (the check sees it)', async (t) => {
  await import('../../clients/table.js');
  t.notOk(ajvLoaded(), 'not loaded by the command table');
  await import('../../clients/mcp/server.js');
  t.ok(ajvLoaded(), 'loaded with the MCP server');
});

/**
 * The modules of what a command does once it runs (following a job, asking on a terminal, the
 * status text, completion scripts, …) are loaded by that command alone: every skillctl start
 * loads the table, and each module costs ~0.5 ms to load. Seen through a module loader hook in a
 * process of its own, since ES modules have no cache to look into.
 */
t.test("the command table loads none of the modules a command loads when it runs", async (t) => {
  const { execFile } = await import('node:child_process');
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const dir = await mkdtemp(join(tmpdir(), 'lazy-commands-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const hooks = join(dir, 'hooks.mjs');
  await writeFile(hooks, "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write(`loaded ${url}\\n`); return next(url, context); }\n");
  const register = join(dir, 'register.mjs');
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  // The built table, as skillctl (dist/clients/skillctl.js) loads it.
  const { ROOT } = await import('../helpers/daemon.js');
  const table = pathToFileURL(join(ROOT, 'dist', 'clients', 'table.js')).href;
  const stderr = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', register, '--input-type=module', '-e', `await import(${JSON.stringify(table)});`], (error, _stdout, err) => (error === null ? resolve(err) : reject(error)));
  });
  const loaded = stderr.split('\n').filter((line) => line.startsWith('loaded ')).map((line) => line.slice(line.lastIndexOf('/') + 1).replace(/\.[jt]s$/, ''));
  t.ok(loaded.includes('table'), `the hook sees the table load (${loaded.length} modules)`);
  const whenRun = ['run-follow', 'follow-job', 'interactive', 'status-line', 'events', 'input-values', 'interaction-text', 'prune', 'refusals', 'report-result', 'status-text', 'completion-bash', 'completion-zsh', 'completion-fish'];
  t.same(loaded.filter((name) => whenRun.includes(name)), [], 'none of them');
});
