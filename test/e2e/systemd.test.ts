import t from 'tap';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, lstat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DAEMON_BIN, ROOT, TEST_SKILLS } from '../helpers/daemon.js';
import { RpcClient } from '../../rpc/client.js';
import { freePort, startWeb } from '../helpers/web.js';
import { loadConfig } from '../../daemon/base/config.js';

const run = promisify(execFile);
const has = async (tool: string): Promise<boolean> => (await run('sh', ['-c', `command -v ${tool}`]).catch(() => null)) !== null;
const activate = await has('systemd-socket-activate');
const analyze = await has('systemd-analyze');
const socat = await has('socat');

async function connectWithRetry(path: string): Promise<RpcClient> {
  for (let i = 0; ; i += 1) {
    try {
      return await RpcClient.connect(path);
    } catch (error) {
      if (i > 100) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

t.test(
  'socket activation: a client that connected before the daemon was ready is served',
  { skip: activate ? false : 'systemd-socket-activate is missing (Debian package systemd; .ci/run installs it)' },
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'skilld-sd-'));
    const socket = join(dir, 'skilld.sock');
    const child: ChildProcess = spawn('systemd-socket-activate', ['-l', socket, process.execPath, DAEMON_BIN, '--state-dir', join(dir, 'state'), '--skills-dir', TEST_SKILLS, '--socket', join(dir, 'unused.sock')], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await rm(dir, { recursive: true, force: true });
    });
    // The listening socket exists before the daemon runs: connecting starts it.
    const client = await connectWithRetry(socket);
    const answer = await client.request<{ ok: boolean }>('daemon/ping');
    t.equal(answer.ok, true);
    const status = await client.request<{ skills: { ok: number } }>('daemon/status');
    t.ok(status.skills.ok > 0, 'the daemon behind the inherited socket serves normally');
    client.close();
  },
);

t.test(
  'READY=1 reaches NOTIFY_SOCKET once the socket accepts',
  { skip: socat ? false : 'socat is missing (.ci/run installs it)' },
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'skilld-notify-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const notifySocket = join(dir, 'notify.sock');
    const received = join(dir, 'received');
    const listener = spawn('socat', ['-u', `UNIX-RECV:${notifySocket}`, `OPEN:${received},creat,append`], { stdio: 'ignore' });
    t.teardown(async () => {
      listener.kill();
      if (listener.exitCode === null) await once(listener, 'exit');
    });
    // Waits that catch a hang: long enough for anything a busy machine merely delays.
    const until = Date.now() + 60_000;
    while (!(await readFile(notifySocket).then(() => true, (e: NodeJS.ErrnoException) => e.code !== 'ENOENT'))) {
      if (Date.now() > until) throw new Error('socat made no notify socket');
      await new Promise((r) => setTimeout(r, 20));
    }
    const daemon = spawn(process.execPath, [DAEMON_BIN, '--socket', join(dir, 's.sock'), '--state-dir', join(dir, 'state'), '--skills-dir', TEST_SKILLS], { env: { ...process.env, NOTIFY_SOCKET: notifySocket }, stdio: 'ignore' });
    t.teardown(async () => {
      if (daemon.exitCode === null) {
        daemon.kill('SIGTERM');
        await once(daemon, 'exit');
      }
    });
    let text = '';
    const ready = Date.now() + 60_000;
    while (!text.includes('READY=1') && Date.now() < ready) {
      text = await readFile(received, 'utf8').catch(() => '');
      await new Promise((r) => setTimeout(r, 20));
    }
    t.match(text, /READY=1/);
    const client = await RpcClient.connect(join(dir, 's.sock'));
    t.same(await client.request('daemon/ping'), { ok: true, version: '0.1.0', protocol: 1 }, 'ready means the socket answers');
    client.close();
  },
);

t.test('the unit files pass systemd-analyze verify', { skip: analyze ? false : 'systemd-analyze is missing' }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-units-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const unit of ['skilld.service', 'skilld.socket']) await writeFile(join(dir, unit), await readFile(join(ROOT, 'systemd', unit)));
  const result = await run('systemd-analyze', ['verify', join(dir, 'skilld.service'), join(dir, 'skilld.socket')]).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
  t.equal(result.code, 0, result.out);
  const service = await readFile(join(ROOT, 'systemd', 'skilld.service'), 'utf8');
  for (const line of ['RuntimeDirectory=skilld', 'StateDirectory=skilld', 'KillMode=process', 'Type=notify', 'NotifyAccess=all', 'Delegate=yes']) t.match(service, line);
  t.notMatch(service, /^ProtectControlGroups=/m, 'the cgroup file system stays writable, or the delegation would be void');
  t.notMatch(service, /^(ProtectKernelTunables|ProtectKernelLogs|ProtectProc|ProcSubset)=/m, "nothing covers part of /proc: the kernel would refuse each job's sandbox a /proc of its own");
  t.match(service, /^RestrictNamespaces=user mnt pid ipc uts cgroup net$/m, "each job's sandbox may make its namespaces");
});

const WEB_UNIT = join(ROOT, 'systemd', 'skillctl-web.service');

t.test("skillctl-web.service passes systemd-analyze --user verify, without a word about the unit", { skip: analyze ? false : 'systemd-analyze is missing' }, async (t) => {
  // A user manager's lookup needs a runtime folder; an empty one of the test's own does.
  const runtime = await mkdtemp(join(tmpdir(), 'skilld-user-units-'));
  t.teardown(() => rm(runtime, { recursive: true, force: true }));
  const result = await run('systemd-analyze', ['--user', 'verify', WEB_UNIT], { env: { ...process.env, XDG_RUNTIME_DIR: runtime } }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
  t.equal(result.code, 0, result.out);
  // A setting systemd cannot parse is only warned about ("ignoring"), with the exit code still 0.
  t.notMatch(result.out, /skillctl-web\.service/, result.out);
});

t.test('skillctl-web.service runs the page as the user, on a fixed port, its address kept out of the journal; README and docs/web.md say how', async (t) => {
  const unit = await readFile(WEB_UNIT, 'utf8');
  for (const line of ['Environment=SKILLCTL_WEB_PORT=8421', 'ExecStart=/usr/bin/env skillctl web --port ${SKILLCTL_WEB_PORT}', 'Restart=on-failure', 'StandardOutput=null', 'UMask=0077', 'WantedBy=default.target']) {
    t.match(unit, new RegExp(`^${line.replace(/[$.{}]/g, '\\$&')}$`, 'm'), line);
  }
  t.notMatch(unit, /^(User|Group)=/m, 'a user unit runs as the user who enabled it: the page shows their jobs');
  for (const doc of ['README.md', join('docs', 'web.md')]) t.match(await readFile(join(ROOT, doc), 'utf8'), 'systemctl --user enable --now skillctl-web', doc);
});

t.test("skillctl-web.service's command line starts the page with a kept token, and what systemctl stop sends ends it with 0 (not started again)", async (t) => {
  const unit = await readFile(WEB_UNIT, 'utf8');
  const port = await freePort();
  const command = /^ExecStart=\/usr\/bin\/env skillctl (.*)$/m.exec(unit)?.[1]?.replace('${SKILLCTL_WEB_PORT}', String(port)).split(' ') ?? [];
  t.same(command.slice(0, 2), ['web', '--port']);
  const state = await mkdtemp(join(tmpdir(), 'skilld-web-unit-'));
  t.teardown(() => rm(state, { recursive: true, force: true }));
  // No daemon: the page starts without one, as the unit may start before the daemon.
  const web = await startWeb(join(state, 'no-daemon.sock'), command.slice(1), { ...process.env, XDG_STATE_HOME: state });
  t.equal(web.port, port);
  t.equal(web.tokenFile, join(state, 'skilld', `web-${port}.token`));
  const [code] = (await Promise.all([once(web.child, 'exit'), web.child.kill('SIGTERM')]))[0] as [number | null];
  t.equal(code, 0, 'Restart=on-failure leaves a page that exited 0 stopped');
});

const EXAMPLE_CONFIG = join(ROOT, 'systemd', 'config.example.json');

t.test('the group skilld may use the socket, and every setting comes from the config file', async (t) => {
  const service = await readFile(join(ROOT, 'systemd', 'skilld.service'), 'utf8');
  const socket = await readFile(join(ROOT, 'systemd', 'skilld.socket'), 'utf8');
  for (const line of ['SocketMode=0660', 'SocketUser=skilld', 'SocketGroup=skilld', 'DirectoryMode=0755']) t.match(socket, new RegExp(`^${line}$`, 'm'));
  for (const line of ['User=skilld', 'Group=skilld', 'RuntimeDirectoryMode=0750', 'Environment=HOME=/var/lib/skilld', 'ExecStart=/usr/bin/env skilld --config /etc/skilld/config.json']) t.match(service, new RegExp(`^${line}$`, 'm'));
  t.notMatch(service, /^Environment=SKILLD_/m, 'no SKILLD_* variable: it would silently win over the config file');
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  t.match(readme, /install .* systemd\/config\.example\.json \/etc\/skilld\/config\.json/, "README's install steps put the example where ExecStart reads it");
});

t.test('systemd/config.example.json loads as skilld loads it, with the systemd paths and a group socket', async (t) => {
  const config = await loadConfig({ flags: { config: EXAMPLE_CONFIG }, env: {}, bundledSkillsDir: join(ROOT, 'skills'), uid: 990, home: '/var/lib/skilld' });
  t.equal(config.socket, '/run/skilld/skilld.sock');
  t.equal(config.socket_mode, 0o660);
  t.equal(config.state_dir, '/var/lib/skilld');
  t.same(config.skills_dirs, ['/var/lib/skilld/skills', '/usr/lib/node_modules/skilld/skills']);
});

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** Connects to `socket` as uid `nobody` with primary group `gid` (no other group) and pings; resolves with the answer line or the error code. */
async function pingAs(gid: number, socket: string): Promise<string> {
  const program = `const s = require('node:net').createConnection(process.argv[1]);
s.on('connect', () => s.write('{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\\n'));
s.on('data', (d) => { process.stdout.write(String(d)); s.end(); });
s.on('error', (e) => process.stdout.write(e.code));`;
  const { stdout } = await run(process.execPath, ['-e', program, socket], { uid: NOBODY, gid, cwd: '/' });
  return stdout.trim();
}

/** A folder under the temp folder that any user may pass through (not list): the socket's folder decides. */
async function passable(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o711);
  return dir;
}

async function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  let text = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${text}`)));
  });
}

t.test(
  'with the example config, a socket the daemon creates is 0660 in a 0750 folder, under UMask=0077: its group may connect, others may not',
  { skip: isRoot ? false : 'needs root to connect as another user' },
  async (t) => {
    const dir = await passable('skilld-group-');
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const socket = join(dir, 'run', 'skilld.sock');
    const args = [DAEMON_BIN, '--config', EXAMPLE_CONFIG, '--socket', socket, '--state-dir', join(dir, 'state'), '--skills-dir', TEST_SKILLS];
    const daemon = spawn('sh', ['-c', 'umask 0077 && exec "$@"', 'sh', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(async () => {
      if (daemon.exitCode === null) {
        daemon.kill('SIGTERM');
        await once(daemon, 'exit');
      }
    });
    await waitForLine(daemon, /skilld ready/);
    t.equal((await lstat(socket)).mode & 0o777, 0o660, 'socket_mode "0660" from the example config');
    t.equal((await lstat(join(dir, 'run'))).mode & 0o777, 0o750, 'the folder it made lets the group through');
    const group = (await lstat(socket)).gid;
    t.match(await pingAs(group, socket), /"result":\{"ok":true/, "a member of the socket's group is served");
    t.equal(await pingAs(NOBODY, socket), 'EACCES', 'anyone else is refused by the file system');
  },
);

t.test(
  'socket activation with SocketMode=0660: the daemon serves the group through the socket systemd made, and leaves its mode alone',
  { skip: !activate ? 'systemd-socket-activate is missing (Debian package systemd; .ci/run installs it)' : isRoot ? false : 'needs root to connect as another user' },
  async (t) => {
    const dir = await passable('skilld-sd-group-');
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const socket = join(dir, 'skilld.sock');
    const child = spawn('systemd-socket-activate', ['-l', socket, process.execPath, DAEMON_BIN, '--config', EXAMPLE_CONFIG, '--state-dir', join(dir, 'state'), '--skills-dir', TEST_SKILLS, '--socket', join(dir, 'unused.sock')], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    });
    for (let i = 0; i < 250 && (await lstat(socket).catch(() => null)) === null; i += 1) await new Promise((r) => setTimeout(r, 20));
    // What SocketMode=0660 makes systemd do; systemd-socket-activate has no such option.
    await chmod(socket, 0o660);
    const group = (await lstat(socket)).gid;
    t.match(await pingAs(group, socket), /"result":\{"ok":true/, 'a member connects first: that starts the daemon, which answers');
    t.equal(await pingAs(NOBODY, socket), 'EACCES');
    t.equal((await lstat(socket)).mode & 0o777, 0o660, 'the inherited socket keeps the mode systemd gave it');
    t.notOk(await lstat(join(dir, 'unused.sock')).catch(() => null), 'the daemon created no socket of its own');
  },
);

t.test(
  "after a boot, before the service ever started: the folder skilld.socket makes lets the socket's group reach it (the newcomer's case)",
  { skip: !activate ? 'systemd-socket-activate is missing (Debian package systemd; .ci/run installs it)' : isRoot ? false : 'needs root for a private mount namespace and other users' },
  async (t) => {
    // What systemd leaves after a boot: /run/skilld made by the socket unit, root:root with the
    // unit's DirectoryMode (RuntimeDirectory= applies only when the service starts, which socket
    // activation delays to the first connection). A private mount namespace keeps the host's /run.
    const unit = await readFile(join(ROOT, 'systemd', 'skilld.socket'), 'utf8');
    const mode = /^DirectoryMode=(\d+)$/m.exec(unit)?.[1];
    t.ok(mode, 'the socket unit sets DirectoryMode');
    const dir = await passable('skilld-boot-');
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const group = 4242;
    const ping = `const s = require('node:net').createConnection(process.argv[1]);
s.on('connect', () => s.write('{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\\n'));
s.on('data', (d) => { process.stdout.write(String(d)); s.end(); });
s.on('error', (e) => process.stdout.write(e.code));`;
    const script = `set -eu
mount -t tmpfs -o mode=0755 skilld-test-run /run
install -d -m "$MODE" -o root -g root /run/skilld
systemd-socket-activate -l /run/skilld/skilld.sock "$NODE" "$DAEMON" --config "$CONFIG" --state-dir "$STATE" --skills-dir "$SKILLS" --socket /run/skilld/unused.sock >/dev/null 2>&1 &
activator=$!
i=0; while [ ! -S /run/skilld/skilld.sock ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
chown "0:$GROUP" /run/skilld/skilld.sock && chmod 0660 /run/skilld/skilld.sock  # SocketGroup=, SocketMode=
echo "member $(setpriv --reuid=65534 --regid="$GROUP" --clear-groups "$NODE" -e "$PING" /run/skilld/skilld.sock)"
echo "other $(setpriv --reuid=65534 --regid=65534 --clear-groups "$NODE" -e "$PING" /run/skilld/skilld.sock)"
kill $activator; wait $activator || true`;
    const env = { ...process.env, MODE: mode as string, NODE: process.execPath, DAEMON: DAEMON_BIN, CONFIG: EXAMPLE_CONFIG, STATE: join(dir, 'state'), SKILLS: TEST_SKILLS, GROUP: String(group), PING: ping };
    const { stdout } = await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], { env, timeout: 60_000 });
    t.match(stdout, /^member \{"jsonrpc":"2.0","id":1,"result":\{"ok":true/m, 'a member of the group connects first, which starts the daemon, and is served');
    t.match(stdout, /^other EACCES$/m, 'anyone else is refused by the socket');
  },
);
