// The bridges of a job's own network (sandbox/network-bridge.ts), run as the sandbox runs them:
// each listens on loopback, leads each connection to a Unix socket, starts the command behind it
// and ends as the command ended.
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BRIDGE_FAILED, BRIDGE_SCRIPT, SOCAT_BRIDGE_SCRIPT, bridgeArgs } from '../../daemon/sandbox/network-bridge.js';

const dir = await mkdtemp(join(tmpdir(), 'skilld-bridge-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const script = join(dir, 'bridge.cjs');
await writeFile(script, BRIDGE_SCRIPT);

/** A Unix socket that answers each line with `echo: <line>`. */
async function echoSocket(name: string): Promise<string> {
  const path = join(dir, name);
  const server = createServer((socket) => socket.on('data', (data) => socket.end(`echo: ${data.toString()}`)));
  server.listen(path);
  await once(server, 'listening');
  t.teardown(() => server.close());
  return path;
}

/** A loopback port free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs the bridge with these listeners (`host:port=socket`) in front of `node -e code`. */
function bridge(specs: string[], code: string) {
  const child = spawn(process.execPath, [script, ...specs, '--', process.execPath, '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const ended = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null, stdout, stderr }));
  return { child, ended, output: () => stdout };
}

t.test('its arguments: each listener as host:port=socket in the network folder, IPv6 in brackets, then --', async (t) => {
  t.same(bridgeArgs([{ host: '127.0.0.1', port: 3128, socket: 'proxy.sock' }, { host: '::1', port: 11434, socket: 'forward-11434.sock' }]), ['127.0.0.1:3128=/run/skilld/net/proxy.sock', '[::1]:11434=/run/skilld/net/forward-11434.sock', '--']);
});

t.test('a connection to a listener reaches its socket; the command starts once all listen, and its exit code is the bridge\'s', async (t) => {
  const [one, two] = [await echoSocket('one.sock'), await echoSocket('two.sock')];
  const [p1, p2] = [await freePort(), await freePort()];
  const code = `
    const net = require('node:net');
    const ask = (port) => new Promise((resolve) => { let got = ''; const s = net.connect(port, '127.0.0.1', () => s.write('ping ' + port)); s.on('data', (d) => (got += d)); s.on('end', () => resolve(got)); });
    Promise.all([ask(${p1}), ask(${p2})]).then((answers) => { console.log(JSON.stringify(answers)); process.exit(7); });`;
  const run = bridge([`127.0.0.1:${p1}=${one}`, `127.0.0.1:${p2}=${two}`], code);
  const ended = await run.ended;
  t.equal(ended.code, 7, ended.stderr);
  t.same(JSON.parse(ended.stdout), [`echo: ping ${p1}`, `echo: ping ${p2}`]);
});

t.test('a stop reaches the command: the bridge passes SIGTERM on and exits with what the command did', async (t) => {
  const run = bridge([], "process.on('SIGTERM', () => process.exit(3)); console.log('ready'); setInterval(() => {}, 1000);");
  while (!run.output().includes('ready')) await once(run.child.stdout, 'data');
  run.child.kill('SIGTERM');
  t.equal((await run.ended).code, 3);
});

t.test('a command killed by a signal: the bridge ends by the same signal', async (t) => {
  const ended = await bridge([], "process.kill(process.pid, 'SIGKILL')").ended;
  t.same([ended.code, ended.signal], [null, 'SIGKILL']);
});

t.test('a port that cannot be listened on, or a command that cannot start: exit 125 and why, on stderr', async (t) => {
  const busy = createServer().listen(0, '127.0.0.1');
  await once(busy, 'listening');
  t.teardown(() => busy.close());
  const { port } = busy.address() as AddressInfo;
  const taken = await bridge([`127.0.0.1:${port}=${join(dir, 'none.sock')}`], 'process.exit(0)').ended;
  t.equal(taken.code, BRIDGE_FAILED);
  t.match(taken.stderr, new RegExp(`skilld network bridge: cannot listen on 127.0.0.1:${port}`));
  const child = spawn(process.execPath, [script, '--', join(dir, 'no-such-program')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const [code] = await once(child, 'exit');
  t.equal(code, BRIDGE_FAILED);
  t.match(stderr, /cannot start .*no-such-program/);
  const bad = spawn(process.execPath, [script, 'nonsense', '--', 'true'], { stdio: 'ignore' });
  t.equal((await once(bad, 'exit'))[0], BRIDGE_FAILED, 'a listener not host:port=socket');
});

t.test('a connection whose socket is not there is closed, and the bridge goes on', async (t) => {
  const port = await freePort();
  const code = `
    const net = require('node:net');
    const s = net.connect(${port}, '127.0.0.1');
    s.on('close', () => { console.log('closed'); process.exit(0); });
    s.on('error', () => undefined);`;
  const ended = await bridge([`127.0.0.1:${port}=${join(dir, 'absent.sock')}`], code).ended;
  t.equal(ended.code, 0);
  t.match(ended.stdout, /closed/);
});

// The socat bridge, run as a sandbox runs it: in a network and PID namespace of its own (bwrap),
// where loopback is empty and the namespace's end ends every socat.
const socat = ['/usr/bin/socat', '/bin/socat'].find((path) => existsSync(path)) ?? null;
const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((path) => existsSync(path)) ?? null;
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path)) ?? null;
const noSocat = bwrap === null || socat === null || setpriv === null ? `needs bwrap, socat and setpriv (.ci/run installs them): ${bwrap === null ? 'no bwrap' : socat === null ? 'no socat' : 'no setpriv'}` : false;

t.test('the socat bridge', { skip: noSocat }, async (t) => {
  const shell = join(dir, 'bridge.sh');
  await writeFile(shell, SOCAT_BRIDGE_SCRIPT);
  const inSandbox = (specs: string[], command: string[]) => {
    const namespaces = ['--dev-bind', '/', '/', '--proc', '/proc', '--unshare-pid', '--unshare-net', ...(process.getuid?.() === 0 ? [] : ['--unshare-user'])];
    const child = spawn(bwrap as string, [...namespaces, '/bin/sh', shell, setpriv as string, socat as string, ...specs, '--', ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    return once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  };
  const node = (code: string): string[] => [process.execPath, '-e', code];

  t.test('each listener reaches its socket, IPv6 too; the command starts once all listen, in the script\'s place, and its exit code is the sandbox\'s', async (t) => {
    const [one, two] = [await echoSocket('s-one.sock'), await echoSocket('s-two.sock')];
    const ipv6 = existsSync('/proc/net/if_inet6');
    const code = `
      const net = require('node:net');
      const ask = (port, host) => new Promise((resolve) => { let got = ''; const s = net.connect(port, host, () => s.write('ping ' + port)); s.on('data', (d) => (got += d)); s.on('end', () => resolve(got)); });
      Promise.all([ask(3128, '127.0.0.1'), ${ipv6 ? "ask(11434, '::1')" : "'echo: ping 11434'"}]).then((answers) => { console.log(JSON.stringify({ answers, parent: process.ppid })); process.exit(7); });`;
    const ended = await inSandbox([`127.0.0.1:3128=${one}`, `${ipv6 ? '[::1]' : '127.0.0.1'}:11434=${two}`], node(code));
    t.equal(ended.code, 7, ended.stderr);
    t.same(JSON.parse(ended.stdout), { answers: ['echo: ping 3128', 'echo: ping 11434'], parent: 1 }, "the namespace's first process is the command's parent: the script is gone");
  });

  t.test('the socats end with the command', async (t) => {
    const mark = await echoSocket(`s-mark-${process.pid}.sock`);
    const ended = await inSandbox([`127.0.0.1:3128=${mark}`], node('process.exit(0)'));
    t.equal(ended.code, 0, ended.stderr);
    const left = (): string[] =>
      readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
        } catch {
          return false;
        }
      });
    // Each gets SIGKILL as the command ends (the sandbox runs without --die-with-parent here, as a
    // job's does): gone a moment later. The wait is bounded, never timed.
    for (let look = 0; look < 200 && left().length > 0; look += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    t.same(left(), []);
  });

  t.test('a connection whose socket is not there is closed, and the bridge goes on', async (t) => {
    const code = `
      const s = require('node:net').connect(3128, '127.0.0.1');
      s.on('close', () => { console.log('closed'); process.exit(0); });
      s.on('error', () => undefined);`;
    const ended = await inSandbox([`127.0.0.1:3128=${join(dir, 'absent.sock')}`], node(code));
    t.equal(ended.code, 0, ended.stderr);
    t.match(ended.stdout, /closed/);
  });

  t.test('an address that cannot be listened on, a command not there, a listener not host:port=socket: exit 125 and why', async (t) => {
    const cannot = await inSandbox([`10.9.9.9:80=${join(dir, 'none.sock')}`], ['true']);
    t.same([cannot.code, cannot.stderr.trim()], [BRIDGE_FAILED, 'skilld network bridge: cannot listen on port 80']);
    const absent = await inSandbox([`127.0.0.1:3128=${join(dir, 'none.sock')}`], [join(dir, 'no-such-program')]);
    t.equal(absent.code, BRIDGE_FAILED);
    t.match(absent.stderr, /cannot start .*no-such-program: not found/);
    const bad = await inSandbox(['127.0.0.1:port=x'], ['true']);
    t.equal(bad.code, BRIDGE_FAILED);
    t.match(bad.stderr, /not host:port=socket: 127\.0\.0\.1:port=x/);
  });
});
