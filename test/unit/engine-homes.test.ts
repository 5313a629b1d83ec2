// Where each engine keeps its home, which of its files a job's own home shares, and how the job's
// homes are made in its run folder (docs/sandbox.md, "Engine homes").
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineHome } from '../../daemon/sandbox/engine-homes.js';
import { jobHomes } from '../../daemon/sandbox/job-home.js';

t.test('each engine\'s home, from the environment it runs with', async (t) => {
  const codex = engineHome('codex', {}, '/home/al');
  t.equal(codex.folder, '/home/al/.codex');
  t.ok(codex.settings.includes('/home/al/.codex/config.toml'));
  t.same(codex.credentials, ['/home/al/.codex/auth.json']);
  t.equal(engineHome('codex', { CODEX_HOME: '/srv/codex', HOME: '/home/bo' }, '/home/al').folder, '/srv/codex', 'CODEX_HOME wins');
  t.equal(engineHome('codex', { HOME: '/home/bo' }, '/home/al').home, '/home/bo', 'HOME as the engine has it');
  t.equal(engineHome('gemini', {}, '/home/al').folder, '/home/al/.gemini');
  t.equal(engineHome('gemini', { GEMINI_CLI_HOME: '/srv/g' }, '/home/al').folder, '/srv/g/.gemini', 'GEMINI_CLI_HOME holds .gemini');
  t.equal(engineHome('iflow', { HOME: '/home/bo' }, '/home/al').folder, '/home/bo/.iflow');
  const claude = engineHome('claude', {}, '/home/al');
  t.equal(claude.folder, '/home/al/.claude');
  t.same(claude.copied, ['/home/al/.claude.json'], 'its state file beside the folder, in HOME');
  t.same(engineHome('claude', { CLAUDE_CONFIG_DIR: '/srv/c' }, '/home/al').copied, ['/srv/c/.claude.json'], 'or in the folder CLAUDE_CONFIG_DIR names');
});

t.test('a job\'s homes: its own HOME, its engine home made in it, state copied in once', async (t) => {
  const dir = t.testdir({ home: { '.claude.json': '{"configured":true}', '.claude': { 'settings.json': '{}' } }, run: {} });
  const engine = engineHome('claude', {}, join(dir, 'home'));
  const homes = jobHomes(engine, join(dir, 'run'), null);
  t.same(homes, { home: { path: join(dir, 'home'), by: join(dir, 'run', 'home') }, engineHome: null }, 'one home: the engine home is below HOME');
  t.ok(existsSync(join(dir, 'run', 'home', '.claude')), 'the engine home made in the job\'s');
  t.equal(readFileSync(join(dir, 'run', 'home', '.claude.json'), 'utf8'), '{"configured":true}', 'the state file copied in');
  writeFileSync(join(dir, 'run', 'home', '.claude.json'), '{"job":true}');
  jobHomes(engine, join(dir, 'run'), null);
  t.equal(readFileSync(join(dir, 'run', 'home', '.claude.json'), 'utf8'), '{"job":true}', 'never copied over what the job wrote');
  t.notOk(existsSync(join(dir, 'run', 'home', '.claude', 'settings.json')), 'settings are shown, not copied');
});

t.test('an engine home outside HOME gets a folder of the job\'s own too; a HOME of / is never replaced', async (t) => {
  const dir = t.testdir({ home: {}, codex: { 'config.toml': '', 'models_cache.json': '[]' }, run: {} });
  const engine = engineHome('codex', { HOME: join(dir, 'home'), CODEX_HOME: join(dir, 'codex') }, '/nowhere');
  t.same(jobHomes(engine, join(dir, 'run'), null), {
    home: { path: join(dir, 'home'), by: join(dir, 'run', 'home') },
    engineHome: { path: join(dir, 'codex'), by: join(dir, 'run', 'engine-home') },
  });
  t.equal(readFileSync(join(dir, 'run', 'engine-home', 'models_cache.json'), 'utf8'), '[]', 'the model catalog copied in');
  mkdirSync(join(dir, 'run2'));
  const rootHome = engineHome('codex', { HOME: '/', CODEX_HOME: join(dir, 'codex') }, '/nowhere');
  t.same(jobHomes(rootHome, join(dir, 'run2'), null), { home: null, engineHome: { path: join(dir, 'codex'), by: join(dir, 'run2', 'engine-home') } });
});
