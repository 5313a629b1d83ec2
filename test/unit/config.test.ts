import t from 'tap';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, defaultConfigPath, loadConfig, type ConfigSources } from '../../daemon/base/config.js';

const HOME = '/home/alice';
const BUNDLED = '/opt/skilld/skills';

const dir = await mkdtemp(join(tmpdir(), 'skilld-config-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

let fileCount = 0;
async function configFile(content: unknown): Promise<string> {
  fileCount += 1;
  const path = join(dir, `config-${fileCount}.json`);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function sources(overrides: { flags?: ConfigSources['flags']; env?: NodeJS.ProcessEnv; home?: string } = {}): ConfigSources {
  return { flags: overrides.flags ?? {}, env: overrides.env ?? {}, bundledSkillsDir: BUNDLED, uid: 1234, home: overrides.home ?? HOME };
}

/** The message of the ConfigError the promise rejects with; anything else fails the test. */
async function configError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ConfigError && error.name === 'ConfigError') return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError, but loadConfig resolved');
}

t.test('defaults without any XDG variables', async (t) => {
  const config = await loadConfig(sources());
  t.same(config, {
    socket: '/tmp/skilld-1234/skilld.sock',
    socket_mode: 0o600,
    state_dir: '/home/alice/.local/state/skilld',
    store: 'files',
    host_id: hostname(),
    lease_ttl_ms: 15_000,
    pinned_grace_sec: 900,
    skills_dirs: ['/home/alice/.local/share/skilld/skills', BUNDLED],
    max_concurrent: 4,
    max_queue: 128,
    max_connections: 64,
    line_timeout_sec: 30,
    idle_timeout_sec: 600,
    session_timeout_sec: 1200,
    hard_timeout_sec: 3600,
    kill_grace_ms: 5000,
    log_level: 'info',
    log_format: 'auto',
    process_containment: 'auto',
    engines_on_stop: 'keep',
    sandbox: { mode: 'preferred', read_only: [], pass_env: [], run_as: null },
    limits: { processes: 512, memory: 4 * 1024 ** 3, tmp: 512 * 1024 ** 2, workspace: 10 * 1024 ** 3 },
    network: { mode: null, allow: [], skills_may_allow: true, bridge: 'auto' },
    access: { mode: 'owner', admins: [] },
    retention: { max_age_ms: 30 * 24 * 3600 * 1000, max_jobs: null, interval_ms: 3600 * 1000 },
    notify: [],
    engines: {
      codex: { command: ['codex'], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
      gemini: { command: ['gemini'], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
      iflow: { command: ['iflow'], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
      claude: { command: ['claude'], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
    },
    default_engine: null,
    config_file: null,
    own_skills_dir: '/home/alice/.local/share/skilld/skills',
  });
});

t.test('default_engine: one of the engines, or null; anything else is a ConfigError naming the value, the choices and the file', async (t) => {
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ default_engine: 'claude' }) } }))).default_engine, 'claude');
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ default_engine: null }) } }))).default_engine, null);
  for (const value of ['Claude', 'gpt', '', 3]) {
    const file = await configFile({ default_engine: value });
    const message = await configError(loadConfig(sources({ flags: { config: file } })));
    t.match(message, `config key "default_engine" must be one of codex, gemini, iflow, claude (got ${JSON.stringify(value)}) (config file ${file})`, JSON.stringify(value));
  }
});

t.test('retention: durations with units, a count, null for no limit; anything else names the key', async (t) => {
  const load = async (retention: unknown) => (await loadConfig(sources({ flags: { config: await configFile({ retention }) } }))).retention;
  t.same(await load({ max_age: '7d', max_jobs: 50000, interval: '90m' }), { max_age_ms: 7 * 86_400_000, max_jobs: 50000, interval_ms: 90 * 60_000 });
  t.same(await load({ max_age: null }), { max_age_ms: null, max_jobs: null, interval_ms: 3_600_000 }, 'keep every job, unless a count says otherwise');
  t.same(await load({ max_age: '1.5 hours', max_jobs: 0 }), { max_age_ms: 5_400_000, max_jobs: 0, interval_ms: 3_600_000 });
  for (const [retention, message] of [
    [{ max_age: 30 }, /"retention.max_age" must be a duration with a unit/],
    [{ max_age: '30' }, /"retention.max_age" must be a duration/],
    [{ max_age: 'soon' }, /"retention.max_age" must be a duration/],
    [{ max_jobs: -1 }, /"retention.max_jobs" must be null or an integer >= 0/],
    [{ max_jobs: '5' }, /"retention.max_jobs"/],
    [{ interval: '10ms' }, /"retention.interval" must be at least 1s/],
    [{ max_days: 3 }, /"retention.max_days" is unknown/],
    ['30d', /"retention" must be an object/],
  ] as const) t.match(await configError(load(retention)), message, JSON.stringify(retention));
});

t.test('defaults follow XDG_RUNTIME_DIR, XDG_STATE_HOME and XDG_DATA_HOME', async (t) => {
  const config = await loadConfig(sources({ env: { XDG_RUNTIME_DIR: '/run/user/1234', XDG_STATE_HOME: '/xdg/state', XDG_DATA_HOME: '/xdg/data' } }));
  t.equal(config.socket, '/run/user/1234/skilld/skilld.sock');
  t.equal(config.state_dir, '/xdg/state/skilld');
  t.same(config.skills_dirs, ['/xdg/data/skilld/skills', BUNDLED]);
  t.equal(config.own_skills_dir, '/xdg/data/skilld/skills', 'the folder the daemon chose, which it may make');
});

t.test('empty XDG variables count as unset', async (t) => {
  const config = await loadConfig(sources({ env: { XDG_RUNTIME_DIR: '', XDG_STATE_HOME: '' } }));
  t.equal(config.socket, '/tmp/skilld-1234/skilld.sock');
  t.equal(config.state_dir, '/home/alice/.local/state/skilld');
});

t.test('precedence: flags > env > file > defaults for socket, state_dir, skills_dirs, log_level', async (t) => {
  const file = await configFile({ socket: '/file/s.sock', state_dir: '/file/state', skills_dirs: ['/file/skills'], log_level: 'warn' });
  const env = { SKILLD_CONFIG: file, SKILLD_SOCKET: '/env/s.sock', SKILLD_STATE_DIR: '/env/state', SKILLD_SKILLS_DIRS: '/env/a:/env/b', SKILLD_LOG_LEVEL: 'debug' };
  const flags = { socket: '/flag/s.sock', state_dir: '/flag/state', skills_dirs: ['/flag/skills'], log_level: 'trace' as const };

  const fromFile = await loadConfig(sources({ env: { SKILLD_CONFIG: file } }));
  t.same(
    { socket: fromFile.socket, state_dir: fromFile.state_dir, skills_dirs: fromFile.skills_dirs, log_level: fromFile.log_level },
    { socket: '/file/s.sock', state_dir: '/file/state', skills_dirs: ['/file/skills'], log_level: 'warn' },
    'file over defaults',
  );

  const fromEnv = await loadConfig(sources({ env }));
  t.same(
    { socket: fromEnv.socket, state_dir: fromEnv.state_dir, skills_dirs: fromEnv.skills_dirs, log_level: fromEnv.log_level },
    { socket: '/env/s.sock', state_dir: '/env/state', skills_dirs: ['/env/a', '/env/b'], log_level: 'debug' },
    'env over file',
  );

  const fromFlags = await loadConfig(sources({ env, flags }));
  t.same(
    { socket: fromFlags.socket, state_dir: fromFlags.state_dir, skills_dirs: fromFlags.skills_dirs, log_level: fromFlags.log_level },
    { socket: '/flag/s.sock', state_dir: '/flag/state', skills_dirs: ['/flag/skills'], log_level: 'trace' },
    'flags over env',
  );
  t.same([fromFile, fromEnv, fromFlags].map((c) => c.own_skills_dir), [null, null, null], 'skills folders someone named are never the daemon\'s own to make');
});

t.test('a flag only overrides its own key', async (t) => {
  const config = await loadConfig(sources({ env: { SKILLD_STATE_DIR: '/env/state' }, flags: { socket: '/flag/s.sock' } }));
  t.equal(config.socket, '/flag/s.sock');
  t.equal(config.state_dir, '/env/state');
});

t.test('the --config flag wins over SKILLD_CONFIG', async (t) => {
  const envFile = await configFile({ max_concurrent: 2 });
  const flagFile = await configFile({ max_concurrent: 7 });
  const config = await loadConfig(sources({ env: { SKILLD_CONFIG: envFile }, flags: { config: flagFile } }));
  t.equal(config.max_concurrent, 7);
});

t.test('SKILLD_SKILLS_DIRS is colon-separated and skips empty parts', async (t) => {
  const config = await loadConfig(sources({ env: { SKILLD_SKILLS_DIRS: '/a::/b/c:' } }));
  t.same(config.skills_dirs, ['/a', '/b/c']);
});

t.test('the config file sets every documented key', async (t) => {
  const file = await configFile({
    socket: '/run/skilld/skilld.sock',
    socket_mode: '0660',
    state_dir: '/var/lib/skilld',
    skills_dirs: ['/srv/skills', '/srv/more'],
    max_concurrent: 8,
    max_queue: 0,
    max_connections: 8,
    session_timeout_sec: 60,
    hard_timeout_sec: 120,
    kill_grace_ms: 0,
    log_level: 'error',
    process_containment: 'process_group',
  });
  const config = await loadConfig(sources({ flags: { config: file } }));
  t.equal(config.socket, '/run/skilld/skilld.sock');
  t.equal(config.socket_mode, 0o660);
  t.equal(config.state_dir, '/var/lib/skilld');
  t.same(config.skills_dirs, ['/srv/skills', '/srv/more']);
  t.equal(config.max_concurrent, 8);
  t.equal(config.max_queue, 0);
  t.equal(config.max_connections, 8);
  t.equal(config.session_timeout_sec, 60);
  t.equal(config.hard_timeout_sec, 120);
  t.equal(config.kill_grace_ms, 0);
  t.equal(config.log_level, 'error');
  t.equal(config.process_containment, 'process_group');
});

t.test('socket_mode accepts three or four octal digits', async (t) => {
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ socket_mode: '600' }) } }))).socket_mode, 0o600);
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ socket_mode: '0640' }) } }))).socket_mode, 0o640);
});

t.test('a socket path longer than a Unix socket can hold is refused, not cut short', async (t) => {
  const at107 = `/${'s'.repeat(106)}`;
  t.equal((await loadConfig(sources({ flags: { socket: at107 } }))).socket, at107, '107 bytes fit');
  await t.rejects(loadConfig(sources({ flags: { socket: `${at107}s` } })), { name: 'ConfigError', message: /config key "socket" is 108 bytes long .*at most 107/ });
  await t.rejects(loadConfig(sources({ flags: { socket: `/${'é'.repeat(54)}` } })), { message: /is 109 bytes long/ }, 'bytes, not characters');
});

t.test('engines.<name>.command, env, profile, sticky_recovery and sandbox', async (t) => {
  const file = await configFile({
    engines: {
      codex: { command: ['node', '/x/fake-codex.mjs'], env: { OPENAI_API_KEY: 'k' }, profile: 'resumable', sandbox: { read_only: ['/usr/share'], read_write: ['/tmp/../tmp'] } },
      iflow: { profile: 'sticky_process', sticky_recovery: 'resume' },
    },
  });
  const config = await loadConfig(sources({ flags: { config: file } }));
  t.same(config.engines, {
    codex: { command: ['node', '/x/fake-codex.mjs'], env: { OPENAI_API_KEY: 'k' }, profile: 'resumable', sticky_recovery: 'fail', sandbox: { read_only: ['/usr/share'], read_write: ['/tmp'] }, network: { allow: [] }, gateway: null },
    gemini: { command: ['gemini'], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
    iflow: { command: ['iflow'], env: {}, profile: 'sticky_process', sticky_recovery: 'resume', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
    claude: { command: ['claude'], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null },
  });
  t.equal(config.config_file, file, 'the file read, for the sandboxes to hide');
  const bad = await configError(loadConfig(sources({ flags: { config: await configFile({ engines: { codex: { sticky_recovery: 'retry' } } }) } })));
  t.match(bad, /"engines\.codex\.sticky_recovery"/);
  t.match(bad, /must be one of fail, resume/);
});

t.test('unknown top-level key: ConfigError names the key and the file', async (t) => {
  const file = await configFile({ sockets: '/x.sock' });
  const message = await configError(loadConfig(sources({ flags: { config: file } })));
  t.match(message, /"sockets"/);
  t.match(message, /unknown/);
  t.ok(message.includes(file), 'names the file');
});

t.test('unknown engine: ConfigError names engines.<name>', async (t) => {
  const file = await configFile({ engines: { aider: { command: ['aider'] } } });
  const message = await configError(loadConfig(sources({ flags: { config: file } })));
  t.match(message, /"engines\.aider"/);
  t.match(message, /not a known engine/);
  t.match(message, /codex, gemini, iflow, claude/);
});

t.test('unknown key inside an engine: ConfigError names engines.<name>.<key>', async (t) => {
  const file = await configFile({ engines: { codex: { cmd: ['codex'] } } });
  t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /"engines\.codex\.cmd" is unknown/);
});

t.test('bad profile: ConfigError names engines.<name>.profile and the choices', async (t) => {
  const file = await configFile({ engines: { gemini: { profile: 'sticky' } } });
  const message = await configError(loadConfig(sources({ flags: { config: file } })));
  t.match(message, /"engines\.gemini\.profile"/);
  t.match(message, /probe, resumable, sticky_process/);
});

t.test('bad engine command and env: ConfigError names the key', async (t) => {
  for (const [engines, key] of [
    [{ codex: { command: [] } }, 'engines.codex.command'],
    [{ codex: { command: 'codex' } }, 'engines.codex.command'],
    [{ codex: { command: ['codex', ''] } }, 'engines.codex.command'],
    [{ iflow: { env: { A: 1 } } }, 'engines.iflow.env'],
    [{ iflow: { env: ['A=1'] } }, 'engines.iflow.env'],
    [{ gemini: 'gemini' }, 'engines.gemini'],
    [{ codex: { sandbox: ['/usr'] } }, 'engines.codex.sandbox'],
    [{ codex: { sandbox: { read_only: '/usr' } } }, 'engines.codex.sandbox.read_only'],
    [{ codex: { sandbox: { hidden: [] } } }, 'engines.codex.sandbox.hidden'],
    [{ claude: { sandbox: { read_write: ['/nonexistent/cache'] } } }, 'engines.claude.sandbox.read_write'],
  ] as const) {
    const file = await configFile({ engines });
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), new RegExp(`"${key.replace(/\./g, '\\.')}"`), JSON.stringify(engines));
  }
  const file = await configFile({ engines: ['codex'] });
  t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /"engines" must be an object/);
});

t.test('non-integer max_concurrent: ConfigError names the key', async (t) => {
  for (const value of [2.5, '4', 0, -1, null, true]) {
    const file = await configFile({ max_concurrent: value });
    const message = await configError(loadConfig(sources({ flags: { config: file } })));
    t.match(message, /"max_concurrent" must be an integer >= 1/, JSON.stringify(value));
    t.ok(message.includes(file), 'names the file');
  }
});

t.test('other integer keys name themselves and their minimum', async (t) => {
  for (const [key, value, min] of [
    ['max_queue', -1, 0],
    ['max_connections', 0, 1],
    ['session_timeout_sec', 0, 1],
    ['hard_timeout_sec', 1.5, 1],
    ['kill_grace_ms', '5000', 0],
  ] as const) {
    const file = await configFile({ [key]: value });
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), new RegExp(`"${key}" must be an integer >= ${min}`));
  }
});

t.test('every duration has a maximum: one past it stops start-up naming the key, the maximum and the file; the maximum itself is taken', async (t) => {
  for (const [key, max] of [
    ['session_timeout_sec', 31_536_000],
    ['hard_timeout_sec', 31_536_000],
    ['pinned_grace_sec', 31_536_000],
    ['kill_grace_ms', 3_600_000],
    ['lease_ttl_ms', 86_400_000],
    ['line_timeout_sec', 86_400],
    ['idle_timeout_sec', 86_400],
  ] as const) {
    for (const value of [max + 1, Number.MAX_SAFE_INTEGER]) {
      const file = await configFile({ [key]: value });
      const message = await configError(loadConfig(sources({ flags: { config: file } })));
      t.match(message, new RegExp(`"${key}" must be an integer >= \\d+ and <= ${max}`), `${key} ${value}`);
      t.ok(message.includes(file), 'names the file');
    }
    const config = await loadConfig(sources({ flags: { config: await configFile({ [key]: max }) } }));
    t.equal(config[key], max, `${key} ${max} is taken`);
  }
});

t.test('bad socket_mode: ConfigError names the key', async (t) => {
  for (const value of ['0800', 'rw-------', '06000', '', 384]) {
    const file = await configFile({ socket_mode: value });
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /"socket_mode"/, JSON.stringify(value));
  }
});

t.test('bad skills_dirs and log_level: ConfigError names the key', async (t) => {
  for (const value of [[], '/srv/skills', [''], [1]]) {
    const file = await configFile({ skills_dirs: value });
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /"skills_dirs"/, JSON.stringify(value));
  }
  t.match(await configError(loadConfig(sources({ env: { SKILLD_LOG_LEVEL: 'loud' } }))), /"log_level" must be one of trace, debug, info/);
});

t.test('bad process_containment: ConfigError names the key and the choices', async (t) => {
  for (const value of ['cgroups', '', null, 1]) {
    const file = await configFile({ process_containment: value });
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /"process_containment" must be one of auto, cgroup, process_group/, JSON.stringify(value));
  }
});

t.test('engines_on_stop: keep or stop; anything else is a ConfigError naming the choices', async (t) => {
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ engines_on_stop: 'stop' }) } }))).engines_on_stop, 'stop');
  for (const value of ['kill', true, null]) {
    const file = await configFile({ engines_on_stop: value });
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /"engines_on_stop" must be one of keep, stop/, JSON.stringify(value));
  }
});

t.test('unreadable config file: ConfigError names the path', async (t) => {
  const missing = join(dir, 'does-not-exist.json');
  const message = await configError(loadConfig(sources({ flags: { config: missing } })));
  t.match(message, /cannot read config file/);
  t.ok(message.includes(missing));
  const folder = join(dir, 'a-folder.json');
  await mkdir(folder);
  t.match(await configError(loadConfig(sources({ env: { SKILLD_CONFIG: folder } }))), /cannot read config file/);
});

t.test('invalid JSON: ConfigError names the path', async (t) => {
  const file = await configFile('{"socket": "/x.sock",');
  const message = await configError(loadConfig(sources({ flags: { config: file } })));
  t.match(message, /is not valid JSON/);
  t.ok(message.includes(file));
});

t.test('a config file that is not a JSON object is refused', async (t) => {
  for (const content of ['[]', '"text"', 'null', '3']) {
    const file = await configFile(content);
    t.match(await configError(loadConfig(sources({ flags: { config: file } }))), /must hold a JSON object/, content);
  }
});

t.test(
  'a bad value from the environment is not blamed on the config file',
  async (t) => {
    const file = await configFile({ log_level: 'debug' });
    const message = await configError(loadConfig(sources({ env: { SKILLD_CONFIG: file, SKILLD_LOG_LEVEL: 'loud' } })));
    t.notMatch(message, /config file/);
  },
);

t.test('log_format: auto by default; json or pretty from the file, SKILLD_LOG_FORMAT or the flag', async (t) => {
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ log_format: 'json' }) } }))).log_format, 'json');
  t.equal((await loadConfig(sources({ env: { SKILLD_LOG_FORMAT: 'pretty' } }))).log_format, 'pretty');
  t.equal((await loadConfig(sources({ env: { SKILLD_LOG_FORMAT: 'pretty' }, flags: { log_format: 'json' } }))).log_format, 'json');
  t.match(await configError(loadConfig(sources({ flags: { config: await configFile({ log_format: 'text' }) } }))), /"log_format" must be one of auto, json, pretty/);
});

t.test('store: files by default, or a PostgreSQL URL; host_id: the hostname, or a name of letters, digits, dots, dashes', async (t) => {
  const url = 'postgres://skilld@%2Frun%2Fpostgresql/skilld';
  t.equal((await loadConfig(sources({ flags: { config: await configFile({ store: url, host_id: 'web-1.example' }) } }))).store, url);
  t.equal((await loadConfig(sources({ env: { SKILLD_STORE: 'postgresql://db.example/skilld' } }))).store, 'postgresql://db.example/skilld');
  t.equal((await loadConfig(sources({ env: { SKILLD_HOST_ID: 'b' } }))).host_id, 'b');
  t.match(await configError(loadConfig(sources({ flags: { config: await configFile({ store: 'sqlite:///var/lib/x.db' }) } }))), /"store" must be "files" or a PostgreSQL URL/);
  t.match(await configError(loadConfig(sources({ env: { SKILLD_STORE: 'postgres://has a space' } }))), /"store" must be "files" or a PostgreSQL URL/);
  t.match(await configError(loadConfig(sources({ flags: { config: await configFile({ host_id: 'two words' }) } }))), /"host_id" must be 1 to 255 letters/);
  t.match(await configError(loadConfig(sources({ flags: { config: await configFile({ host_id: '-a' }) } }))), /"host_id" must be/);
  const cluster = await loadConfig(sources({ flags: { config: await configFile({ lease_ttl_ms: 3000, pinned_grace_sec: 0 }) } }));
  t.same([cluster.lease_ttl_ms, cluster.pinned_grace_sec], [3000, 0]);
  t.match(await configError(loadConfig(sources({ flags: { config: await configFile({ lease_ttl_ms: 999 }) } }))), /"lease_ttl_ms" must be an integer >= 1000/);
  t.match(await configError(loadConfig(sources({ flags: { config: await configFile({ pinned_grace_sec: -1 }) } }))), /"pinned_grace_sec" must be an integer >= 0/);
});

t.test('the default config file: $XDG_CONFIG_HOME/skilld/config.json, else ~/.config/skilld/config.json', async (t) => {
  t.equal(defaultConfigPath({ XDG_CONFIG_HOME: '/xdg/config' }, HOME), '/xdg/config/skilld/config.json');
  t.equal(defaultConfigPath({}, HOME), '/home/alice/.config/skilld/config.json');
  t.equal(defaultConfigPath({ XDG_CONFIG_HOME: '' }, HOME), '/home/alice/.config/skilld/config.json', 'empty counts as unset');

  const home = await mkdtemp(join(dir, 'home-'));
  const xdg = await mkdtemp(join(dir, 'xdg-'));
  t.equal((await loadConfig(sources({ home, env: { XDG_CONFIG_HOME: xdg } }))).max_concurrent, 4, 'absent: the defaults, no error');
  await mkdir(join(home, '.config', 'skilld'), { recursive: true });
  await writeFile(join(home, '.config', 'skilld', 'config.json'), JSON.stringify({ max_concurrent: 3 }));
  t.equal((await loadConfig(sources({ home }))).max_concurrent, 3, '~/.config/skilld/config.json without XDG_CONFIG_HOME');
  await mkdir(join(xdg, 'skilld'));
  await writeFile(join(xdg, 'skilld', 'config.json'), JSON.stringify({ max_concurrent: 5 }));
  t.equal((await loadConfig(sources({ home, env: { XDG_CONFIG_HOME: xdg } }))).max_concurrent, 5, 'XDG_CONFIG_HOME wins over ~/.config');
  t.equal((await loadConfig(sources({ home, env: { XDG_CONFIG_HOME: xdg }, flags: { config: await configFile({ max_concurrent: 6 }) } }))).max_concurrent, 6, '--config replaces it');
  t.equal((await loadConfig(sources({ home, env: { XDG_CONFIG_HOME: xdg, SKILLD_CONFIG: await configFile({}) } }))).max_concurrent, 4, 'SKILLD_CONFIG replaces it');
});

t.test('a broken default config file stops start-up with a message naming it', async (t) => {
  const xdg = await mkdtemp(join(dir, 'xdg-broken-'));
  const path = join(xdg, 'skilld', 'config.json');
  await mkdir(join(xdg, 'skilld'));
  await writeFile(path, '{"max_concurrent": ');
  const message = await configError(loadConfig(sources({ env: { XDG_CONFIG_HOME: xdg } })));
  t.match(message, /is not valid JSON/);
  t.ok(message.includes(path), message);
  await writeFile(path, JSON.stringify({ max_concurent: 2 }));
  const unknown = await configError(loadConfig(sources({ env: { XDG_CONFIG_HOME: xdg } })));
  t.match(unknown, /"max_concurent" is unknown/);
  t.ok(unknown.includes(path), unknown);
});

t.test('access: owner by default; shared, or an object with the mode and the administrators', async (t) => {
  const load = async (access: unknown) => (await loadConfig(sources({ flags: { config: await configFile({ access }) } }))).access;
  t.same(await load('shared'), { mode: 'shared', admins: [] });
  t.same(await load({ admins: ['group:ops', 'user:alice', 'group:ops'] }), { mode: 'owner', admins: ['group:ops', 'user:alice'] });
  const problem = async (access: unknown) => configError(loadConfig(sources({ flags: { config: await configFile({ access }) } })));
  t.match(await problem('everyone'), /"access" must be one of owner, shared/);
  t.match(await problem({ mode: 'open' }), /"access.mode" must be one of owner, shared/);
  t.match(await problem({ admins: ['alice'] }), /"access.admins" has "alice", which is not "user:<name>" or "group:<name>"/);
  t.match(await problem({ admins: 'group:ops' }), /"access.admins" must be a list/);
  t.match(await problem({ owners: [] }), /"access.owners" is unknown/);
});
