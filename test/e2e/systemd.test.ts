import t from 'tap';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DAEMON_BIN, ROOT, TEST_SKILLS } from '../helpers/daemon.js';
import { RpcClient } from '../../rpc/client.js';

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
    for (let i = 0; i < 100 && !(await readFile(notifySocket).then(() => true, (e: NodeJS.ErrnoException) => e.code !== 'ENOENT')); i += 1) await new Promise((r) => setTimeout(r, 20));
    const daemon = spawn(process.execPath, [DAEMON_BIN, '--socket', join(dir, 's.sock'), '--state-dir', join(dir, 'state'), '--skills-dir', TEST_SKILLS], { env: { ...process.env, NOTIFY_SOCKET: notifySocket }, stdio: 'ignore' });
    t.teardown(async () => {
      if (daemon.exitCode === null) {
        daemon.kill('SIGTERM');
        await once(daemon, 'exit');
      }
    });
    let text = '';
    for (let i = 0; i < 250 && !text.includes('READY=1'); i += 1) {
      text = await readFile(received, 'utf8').catch(() => '');
      await new Promise((r) => setTimeout(r, 20));
    }
    t.match(text, /READY=1/);
    const client = await RpcClient.connect(join(dir, 's.sock'));
    t.same(await client.request('daemon/ping'), { ok: true, version: '0.1.0' }, 'ready means the socket answers');
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
  for (const line of ['RuntimeDirectory=skilld', 'StateDirectory=skilld', 'KillMode=mixed', 'Type=notify', 'NotifyAccess=all', 'Delegate=yes']) t.match(service, line);
  t.notMatch(service, /^ProtectControlGroups=/m, 'the cgroup file system stays writable, or the delegation would be void');
});
