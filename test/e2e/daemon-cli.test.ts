// skilld's own command line through the built daemon: --version, --help, readable logs on a
// terminal and JSON lines elsewhere, the default config file, and the folders it creates.
import t from 'tap';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DAEMON_BIN, ENGINE_NAMES, FIXTURES, ROOT, TEST_SKILLS } from '../helpers/daemon.js';
import { hasTool } from '../helpers/tools.js';
import { colourTerminalEnv } from '../helpers/terminal.js';
import { RpcClient } from '../../rpc/client.js';

const run = promisify(execFile);
const root = await mkdtemp(join(tmpdir(), 'skilld-cli-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The test's environment without any setting of skilld's own or an XDG folder: each test names
 * what it needs. Nor the checkout's `node_modules/.bin` that npm puts on the PATH: the engines
 * there lie where a clone below /tmp would have the daemon warn that their sandboxes hide them.
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SKILLD_') && !key.startsWith('XDG_') && key !== 'NO_COLOR' && key !== 'FORCE_COLOR'));
  const path = (process.env['PATH'] ?? '').split(':').filter((dir) => !dir.startsWith(ROOT)).join(':');
  return { ...env, PATH: path, ...extra };
}

/** A private home, state and socket for one daemon. */
async function place(name: string): Promise<{ dir: string; home: string; socket: string; state: string }> {
  const dir = await mkdtemp(join(root, `${name}-`));
  const home = join(dir, 'home');
  await mkdir(home);
  return { dir, home, socket: join(dir, 'run', 'skilld.sock'), state: join(dir, 'state') };
}

const fakeEngines = { engines: Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)] }])) };

/** Collects a child's stdout and resolves when `pattern` shows in it; rejects if it exits first. */
function output(child: ChildProcess): { text: () => string; seen: (pattern: RegExp) => Promise<void> } {
  let text = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const waiter of waiters) waiter();
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    text: () => text,
    seen: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(text)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
        child.once('exit', (code) => reject(new Error(`exited with ${code} before ${pattern}: ${text}${stderr}`)));
      }),
  };
}

/** Asks the daemon on `socket` for its pid, sends it SIGTERM, and waits for `child` (the daemon or what runs it) to end. */
async function stopThroughSocket(socket: string, child: ChildProcess): Promise<void> {
  const client = await RpcClient.connect(socket);
  const { pid } = await client.request<{ pid: number }>('daemon/status');
  client.close();
  const exited = child.exitCode === null ? once(child, 'exit') : Promise.resolve();
  process.kill(pid, 'SIGTERM');
  await exited;
}

t.test('skilld --version prints the package version and exits 0', async (t) => {
  for (const flag of ['--version', '-V']) {
    const { stdout, stderr } = await run(process.execPath, [DAEMON_BIN, flag]);
    t.equal(stdout, `skilld ${version}\n`, flag);
    t.equal(stderr, '');
  }
});

t.test('skilld --help describes every flag, the environment, this user\'s config file and an example', async (t) => {
  const xdg = join(root, 'help-xdg');
  const { stdout } = await run(process.execPath, [DAEMON_BIN, '--help'], { env: cleanEnv({ XDG_CONFIG_HOME: xdg }) });
  for (const flag of ['--config FILE', '--socket PATH', '--state-dir DIR', '--skills-dir DIR', '--log-level LEVEL', '--log-format FORMAT', '-h, --help', '-V, --version']) t.match(stdout, flag);
  for (const name of ['SKILLD_CONFIG', 'SKILLD_SOCKET', 'SKILLD_STATE_DIR', 'SKILLD_SKILLS_DIRS', 'SKILLD_LOG_LEVEL', 'SKILLD_LOG_FORMAT', 'XDG_CONFIG_HOME', 'XDG_RUNTIME_DIR', 'NO_COLOR']) t.match(stdout, name);
  t.match(stdout, `Default config file for this user: ${join(xdg, 'skilld', 'config.json')} (absent)`);
  t.match(stdout, /Example:\n {2}skilld --socket/);
  const bad = await run(process.execPath, [DAEMON_BIN, '--sockets', 'x']).catch((error: { code: number; stderr: string }) => error);
  t.equal((bad as { code: number }).code, 2, 'an unknown flag is a usage error');
  t.match((bad as { stderr: string }).stderr, /Unknown option '--sockets'[\s\S]*skilld --help/);
});

const noScript = hasTool('script') ? false : 'util-linux `script` is not installed: no terminal to run skilld on';

/** skilld on a pseudo-terminal (`script`), with a private socket and state; resolves once it stopped by SIGTERM. */
async function onTerminal(name: string, env: Record<string, string>): Promise<string> {
  const p = await place(name);
  const command = [process.execPath, DAEMON_BIN, '--socket', p.socket, '--state-dir', p.state, '--skills-dir', TEST_SKILLS].join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: colourTerminalEnv(cleanEnv({ HOME: p.home }), env), stdio: ['pipe', 'pipe', 'pipe'] });
  const out = output(child);
  await out.seen(/skilld ready/);
  await stopThroughSocket(p.socket, child);
  return out.text();
}

t.test('on a terminal the log is readable lines, coloured unless NO_COLOR is set, down to the last one', { skip: noScript }, async (t) => {
  const coloured = await onTerminal('tty', {});
  t.match(coloured, /\[\d\d:\d\d:\d\d\.\d{3}\] \x1b\[32mINFO\x1b\[39m: \x1b\[36mskilld ready\x1b\[39m/, 'time, level and message, in colour');
  t.notMatch(coloured, /"level":30/, 'no JSON line');
  const plain = await onTerminal('tty-nocolor', { NO_COLOR: '1' });
  t.notMatch(plain, /\x1b\[/, 'NO_COLOR: no escape sequence at all');
  t.match(plain, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: skilld ready \{"version":"[^"]+","socket":/m);
  t.match(plain, /INFO: stopping \{"signal":"SIGTERM","engines":"keep"\}/);
  t.match(plain, /INFO: skilld stopped/, 'the last line is flushed before the exit');
});

t.test('piped, the log is JSON lines, down to the last one; --log-format pretty forces readable lines', async (t) => {
  const p = await place('piped');
  const child = spawn(process.execPath, [DAEMON_BIN, '--socket', p.socket, '--state-dir', p.state, '--skills-dir', TEST_SKILLS], { env: cleanEnv({ HOME: p.home }), stdio: ['ignore', 'pipe', 'pipe'] });
  const out = output(child);
  await out.seen(/skilld ready/);
  await stopThroughSocket(p.socket, child);
  const lines = out.text().trim().split('\n').map((line) => JSON.parse(line) as { msg: string; level: number });
  t.same(lines.map((l) => l.msg), ['skilld ready', 'stopping', 'skilld stopped']);

  const forced = spawn(process.execPath, [DAEMON_BIN, '--socket', p.socket, '--state-dir', p.state, '--skills-dir', TEST_SKILLS, '--log-format', 'pretty'], { env: cleanEnv({ HOME: p.home }), stdio: ['ignore', 'pipe', 'pipe'] });
  const pretty = output(forced);
  await pretty.seen(/skilld ready/);
  await stopThroughSocket(p.socket, forced);
  t.match(pretty.text(), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: skilld ready \{/);
  t.notMatch(pretty.text(), /\x1b\[/, 'no colours outside a terminal');
});

/** Starts skilld with `args` and `env`, returns its status once ready, and stops it. */
type Status = { slots: { max: number }; skills: { ok: number }; missing_skills_dirs: string[] };

/** daemon/status of a daemon started with `args`, and what it logged by then. */
async function statusOf(args: string[], env: NodeJS.ProcessEnv, socket: string): Promise<Status & { log: string }> {
  const child = spawn(process.execPath, [DAEMON_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = output(child);
  await out.seen(/skilld ready/);
  const client = await RpcClient.connect(socket);
  const status = await client.request<Status>('daemon/status');
  client.close();
  const log = out.text();
  await stopThroughSocket(socket, child);
  return { ...status, log };
}

t.test('without --config the daemon reads $XDG_CONFIG_HOME/skilld/config.json, else ~/.config/skilld/config.json', async (t) => {
  const p = await place('default-config');
  const xdg = join(p.dir, 'xdg');
  await mkdir(join(xdg, 'skilld'), { recursive: true });
  await writeFile(join(xdg, 'skilld', 'config.json'), JSON.stringify({ ...fakeEngines, max_concurrent: 3, socket: p.socket, state_dir: p.state, skills_dirs: [TEST_SKILLS] }));
  const fromXdg = await statusOf([], cleanEnv({ HOME: p.home, XDG_CONFIG_HOME: xdg }), p.socket);
  t.equal(fromXdg.slots.max, 3, 'max_concurrent from the file');
  t.ok(fromXdg.skills.ok > 0, 'skills_dirs from the file');

  await mkdir(join(p.home, '.config', 'skilld'), { recursive: true });
  await writeFile(join(p.home, '.config', 'skilld', 'config.json'), JSON.stringify({ ...fakeEngines, max_concurrent: 2, socket: p.socket, state_dir: p.state, skills_dirs: [TEST_SKILLS] }));
  t.equal((await statusOf([], cleanEnv({ HOME: p.home }), p.socket)).slots.max, 2, '~/.config/skilld/config.json without XDG_CONFIG_HOME');
});

t.test('a broken default config file: exit 2, a message naming the file, no socket', async (t) => {
  const p = await place('broken-config');
  const file = join(p.home, '.config', 'skilld', 'config.json');
  await mkdir(join(p.home, '.config', 'skilld'), { recursive: true });
  await writeFile(file, '{"max_concurrent": 4,');
  const failed = await run(process.execPath, [DAEMON_BIN, '--socket', p.socket, '--state-dir', p.state], { env: cleanEnv({ HOME: p.home }) }).catch((error: { code: number; stderr: string }) => error);
  t.equal((failed as { code: number }).code, 2);
  t.match((failed as { stderr: string }).stderr, `skilld: config file ${file} is not valid JSON: `);
  t.notOk(existsSync(p.socket), 'nothing was started');
});

t.test('with --skills-dir, --state-dir and --socket given, nothing is created under HOME; a named skills folder that is missing is reported, not made', async (t) => {
  const p = await place('given-folders');
  const mine = join(p.dir, 'my-skils');
  const given = ['--socket', p.socket, '--state-dir', p.state, '--skills-dir', mine];
  const status = await statusOf(given, cleanEnv({ HOME: p.home }), p.socket);
  t.same(await readdir(p.home), [], 'no ~/.local/share/skilld, no ~/.local/state/skilld, nothing');
  t.notOk(existsSync(mine), 'a skills folder someone named is never made (a misspelt path would be)');
  t.same(status.missing_skills_dirs, [mine], 'daemon/status names it');
  t.match(status.log, /"missing":\[[^\]]*my-skils[^\]]*\][^\n]*a skills folder in skills_dirs does not exist/, 'a warning at start names it');

  // The same start without --skills-dir uses, and so makes, the default skills folder.
  const defaulted = await statusOf(['--socket', p.socket, '--state-dir', p.state], cleanEnv({ HOME: p.home }), p.socket);
  t.ok(existsSync(join(p.home, '.local', 'share', 'skilld', 'skills')), 'the default skills folder when none is given');
  t.same(defaulted.missing_skills_dirs, [], 'nothing missing');
  t.notOk(existsSync(join(p.home, '.local', 'state')), 'but no default state folder: --state-dir was given');
});
