// The sandbox's contract as a value, an allow-list: what is shown, how, in which order; its
// bubblewrap command line; and docs/sandbox.md's table, written from the same value.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bwrapArgv } from '../../daemon/sandbox/bwrap.js';
import { describePlan } from '../../daemon/sandbox/describe.js';
import { planSandbox, type HostPaths, type JobPaths, type Mount, type SandboxPlan } from '../../daemon/sandbox/plan.js';
import { systemPaths, type HostLook } from '../../daemon/sandbox/system-paths.js';
import { ROOT } from '../helpers/daemon.js';

/** A Debian 12 host with merged /usr, as `systemPaths` sees it. */
const DEBIAN: HostLook = {
  at(path) {
    const links: Record<string, string> = { '/bin': 'usr/bin', '/sbin': 'usr/sbin', '/lib': 'usr/lib', '/lib64': 'usr/lib64', '/etc/localtime': '/usr/share/zoneinfo/Etc/UTC', '/etc/os-release': '../usr/lib/os-release', '/etc/mtab': '../proc/self/mounts' };
    const present = ['/usr', '/etc/hosts', '/etc/resolv.conf', '/etc/nsswitch.conf', '/etc/gai.conf', '/etc/host.conf', '/etc/ssl/certs', '/etc/ssl/openssl.cnf', '/etc/ca-certificates', '/etc/ca-certificates.conf', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/mime.types'];
    if (links[path] !== undefined) return { kind: 'link', target: links[path] };
    return present.includes(path) ? { kind: 'present' } : { kind: 'absent' };
  },
  real: (path) => path,
};

/** README's systemd set-up: the unit's folders, the example config, HOME=/var/lib/skilld, Codex installed with npm -g. */
const SYSTEMD: HostPaths = {
  system: systemPaths(DEBIAN),
  installed: { program: '/usr/lib/node_modules/@openai/codex/bin/codex.js', shown: [] },
  extra: { readOnly: [], readWrite: [] },
  user: { uid: 990, gid: 990, user: 'skilld', group: 'skilld' },
  switchUser: false,
  tmpBytes: 512 * 1024 * 1024,
  own: { places: ['/var/lib/skilld', '/run/skilld', '/etc/skilld/config.json'], skills: ['/var/lib/skilld/skills'], home: '/var/lib/skilld' },
  bridge: { kind: 'node', program: '/usr/bin/node', shown: [] },
};
const RUN = '/var/lib/skilld/runs/job-78c062d598-0mwwr1guz';
/** A Codex job: its home in place of HOME; the configured home's config.toml and auth.json shared. */
const JOB: JobPaths = {
  workspace: join(RUN, 'workspace'),
  skill: join(RUN, 'skill'),
  home: { path: '/var/lib/skilld', by: join(RUN, 'home') },
  engineHome: null,
  shared: { readOnly: ['/var/lib/skilld/.codex/config.toml'], readWrite: ['/var/lib/skilld/.codex/auth.json'], folders: [] },
  input: { readOnly: [], readWrite: [] },
  network: null,
};
/** The same job with its own network (docs/network.md), as every job of the systemd set-up has: the proxy, and a forwarded port. */
const NETWORKED: JobPaths = {
  ...JOB,
  network: {
    folder: '/var/lib/skilld/net/job-78c062d598-0mwwr1guz',
    listeners: [{ host: '127.0.0.1', port: 3128, socket: 'proxy.sock' }, { host: '127.0.0.1', port: 11434, socket: 'forward-11434.sock' }],
    env: { HTTPS_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost,127.0.0.1,::1' },
  },
};
const paths = (plan: SandboxPlan, kind?: Mount['kind']): string[] => plan.mounts.filter((m) => kind === undefined || m.kind === kind).map(({ path }) => path);
const binds = (plan: SandboxPlan): Array<[string, string, string]> => plan.mounts.flatMap((m) => (m.kind === 'bind' ? [[m.path, m.source, m.access] as [string, string, string]] : []));

t.test('the system: /usr, the merged-/usr links, and the /etc allow-list; nothing else of the host', async (t) => {
  const system = systemPaths(DEBIAN);
  t.same(system.filter((one) => one.kind === 'link').map((one) => one.path), ['/bin', '/sbin', '/lib', '/lib64', '/etc/localtime', '/etc/os-release', '/etc/mtab'], 'links into /usr and /proc are made again');
  t.same(system.filter((one) => one.kind === 'bind').map((one) => one.path).filter((p) => !p.startsWith('/etc/')), ['/usr']);
  for (const hidden of ['/etc/shadow', '/etc/machine-id', '/etc/npmrc', '/etc/pip.conf', '/etc/environment', '/etc/ssh', '/etc/ssl/private', '/etc/skilld', '/etc/codex', '/home', '/root', '/srv', '/opt', '/var', '/run', '/mnt', '/media']) {
    t.notOk(system.some((one) => one.path === hidden || one.path.startsWith(`${hidden}/`)), `${hidden} is not shown`);
  }
  const elsewhere: HostLook = { at: (path) => (path === '/etc/resolv.conf' ? { kind: 'link', target: '/run/systemd/resolve/stub-resolv.conf' } : DEBIAN.at(path)), real: (path) => path };
  t.match(systemPaths(elsewhere).find((one) => one.path === '/etc/resolv.conf'), { kind: 'bind' }, 'a link that leads out of /usr is shown as the file it leads to');
});

t.test('the plan shows what it names, each once, a folder before what is shown inside it', async (t) => {
  const plan = planSandbox(SYSTEMD, JOB);
  const all = paths(plan);
  t.equal(new Set(all).size, all.length, 'each path once');
  for (const [i, path] of all.entries()) {
    for (const later of all.slice(i + 1)) t.notOk(path.startsWith(`${later}/`), `${later} comes before ${path}, which lies in it`);
  }
  t.same(
    binds(plan).filter(([path]) => !path.startsWith('/usr') && !path.startsWith('/etc/')),
    [
      ['/var/lib/skilld', join(RUN, 'home'), 'read_write'],
      ['/var/lib/skilld/.codex/config.toml', '/var/lib/skilld/.codex/config.toml', 'read_only'],
      ['/var/lib/skilld/.codex/auth.json', '/var/lib/skilld/.codex/auth.json', 'read_write'],
      [JOB.skill, JOB.skill, 'read_only'],
      [JOB.workspace, JOB.workspace, 'read_write'],
    ],
    'beyond the system: the job\'s home at HOME (the state folder is HOME here: none of it is shown), the engine\'s settings and credentials, the skill snapshot, the workspace',
  );
  t.match(plan.mounts.find((m) => m.path === '/tmp'), { kind: 'tmpfs', sizeBytes: 512 * 1024 * 1024 }, 'a private /tmp of a bounded size');
  t.match(plan.mounts.find((m) => m.path === '/etc/passwd'), { kind: 'text', text: 'root:x:0:0:root:/root:/bin/sh\nskilld:x:990:990::/var/lib/skilld:/bin/sh\n' }, 'a passwd of two users, made by the daemon');
  t.equal(plan.cwd, JOB.workspace);
  t.same(plan.env, { IS_SANDBOX: '1' });
  t.equal(plan.runAs, null, 'a daemon that is not root runs engines as itself');
  t.equal(plan.program, '/usr/lib/node_modules/@openai/codex/bin/codex.js');
});

t.test('a daemon that runs as root: engines as another user, the configured home\'s files as copies', async (t) => {
  const user = { uid: 999, gid: 998, user: 'skilld-job', group: 'skilld-job' };
  const plan = planSandbox({ ...SYSTEMD, user, switchUser: true }, { ...JOB, home: { path: '/root', by: join(RUN, 'home') } });
  t.same(plan.runAs, user);
  t.same(plan.mounts.filter((m) => m.kind === 'copy').map((m) => [m.path, m.kind === 'copy' && m.access]), [['/var/lib/skilld/.codex/config.toml', 'read_only'], ['/var/lib/skilld/.codex/auth.json', 'read_write']]);
  t.match(plan.mounts.find((m) => m.path === '/etc/passwd'), { text: /skilld-job:x:999:998::\/root:/ });
});

t.test('an engine installed outside /usr, the config\'s paths and the input\'s: shown at their own paths', async (t) => {
  const plan = planSandbox(
    { ...SYSTEMD, installed: { program: '/opt/codex/bin/codex', shown: ['/opt/codex'] }, extra: { readOnly: ['/opt/tools'], readWrite: ['/srv/cache'] } },
    { ...JOB, home: { path: '/home/al', by: join(RUN, 'home') }, engineHome: { path: '/srv/gemini/.gemini', by: join(RUN, 'engine-home') }, input: { readOnly: ['/home/al/project'], readWrite: ['/srv/out'] } },
  );
  t.same(binds(plan).filter(([path]) => ['/opt', '/srv', '/home'].some((top) => path.startsWith(top))), [
    ['/opt/codex', '/opt/codex', 'read_only'],
    ['/opt/tools', '/opt/tools', 'read_only'],
    ['/srv/cache', '/srv/cache', 'read_write'],
    ['/home/al', join(RUN, 'home'), 'read_write'],
    ['/srv/out', '/srv/out', 'read_write'],
    ['/srv/gemini/.gemini', join(RUN, 'engine-home'), 'read_write'],
    ['/home/al/project', '/home/al/project', 'read_only'],
  ]);
  t.same(plan.mounts.filter((m) => m.kind === 'bind' && m.role === 'input').map((m) => m.path), ['/srv/out', '/home/al/project'], 'the input\'s paths are checked as they are opened');
});

t.test('the command line: namespaces, an empty root, the plan\'s mounts by descriptor, exactly the env given, then the engine', async (t) => {
  const plan = planSandbox(SYSTEMD, JOB);
  const fds = new Map(plan.mounts.map((mount, i) => [mount, 10 + i]));
  const argv = bwrapArgv(plan, fds, ['codex', 'exec', '--', '-'], { PATH: '/usr/bin:/bin', OPENAI_API_KEY: 'k' });
  t.same(argv.slice(0, 9), ['bwrap', '--unshare-user', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--new-session']);
  t.notOk(argv.includes('--unshare-net'), 'the network is shared');
  t.notOk(argv.includes('--die-with-parent'), 'an engine does not end with the daemon');
  t.notOk(argv.includes('--disable-userns'), 'an engine may sandbox its own tools');
  const at = (...words: string[]): number => argv.findIndex((_, i) => words.every((w, j) => argv[i + j] === w));
  t.equal(at('--tmpfs', '/'), 9, 'an empty root first');
  t.ok(at('--proc', '/proc') < at('--ro-bind', '/proc/sys', '/proc/sys'), '/proc/sys read-only over its own /proc');
  t.notOk(argv.some((word, i) => (word === '--bind' || word === '--ro-bind') && argv[i + 1] !== '/proc/sys' && argv[i + 1] !== '/proc/sysrq-trigger'), 'no host path is bound by name: each is a descriptor');
  const usr = plan.mounts.find((m) => m.path === '/usr');
  t.ok(at('--ro-bind-fd', String(fds.get(usr as Mount)), '/usr') > 0, 'the system read-only by descriptor');
  t.ok(at('--bind-fd', String(fds.get(plan.mounts.find((m) => m.path === JOB.workspace) as Mount)), JOB.workspace) > at('--bind-fd', String(fds.get(plan.mounts.find((m) => m.path === '/var/lib/skilld') as Mount)), '/var/lib/skilld'), 'the workspace after the home that holds its place');
  t.ok(at('--perms', '1777', '--size', String(512 * 1024 * 1024), '--tmpfs', '/tmp') > 0, 'a private /tmp of a bounded size');
  t.ok(at('--dir', '/var') < at('--dir', '/var/lib') && at('--dir', '/var/lib') < at('--bind-fd', String(fds.get(plan.mounts.find((m) => m.path === '/var/lib/skilld') as Mount)), '/var/lib/skilld'), 'the folders above a mount made first');
  t.ok(at('--clearenv') > 0 && at('--setenv', 'OPENAI_API_KEY', 'k') > at('--clearenv') && at('--setenv', 'IS_SANDBOX', '1') > 0, 'exactly the env given, and the plan\'s');
  t.same(argv.slice(at('--remount-ro', '/')), ['--remount-ro', '/', '--chdir', JOB.workspace, '--', '/usr/lib/node_modules/@openai/codex/bin/codex.js', 'exec', '--', '-'], 'the root read-only once built; the engine by its real path, its argv untouched');
});

t.test('as root: no user namespace, and setpriv makes the engine an unprivileged user with no capabilities', async (t) => {
  const user = { uid: 65534, gid: 65534, user: 'nobody', group: 'nogroup' };
  const plan = planSandbox({ ...SYSTEMD, user, switchUser: true }, JOB);
  const argv = bwrapArgv(plan, new Map(plan.mounts.map((mount, i) => [mount, 10 + i])), ['codex'], {});
  t.notOk(argv.includes('--unshare-user'), 'a user namespace made by root maps the engine to the host\'s root');
  const end = argv.indexOf('--');
  t.same(argv.slice(end), ['--', 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--', '/usr/lib/node_modules/@openai/codex/bin/codex.js']);
});

t.test('docs/sandbox.md shows the plan of the systemd set-up as the code builds it', async (t) => {
  const doc = await readFile(join(ROOT, 'docs', 'sandbox.md'), 'utf8');
  const block = /<!-- plan:systemd -->\n([\s\S]*?)\n<!-- \/plan:systemd -->/.exec(doc)?.[1];
  t.equal(block, describePlan(planSandbox(SYSTEMD, NETWORKED)));
});

t.test("a job's own network: a namespace of its own, its sockets' folder read-only, the bridge in front of the engine, the proxy's variables", async (t) => {
  const plan = planSandbox(SYSTEMD, NETWORKED);
  t.same(plan.network, { bridge: SYSTEMD.bridge, listeners: NETWORKED.network?.listeners });
  t.match(plan.mounts.find((m) => m.path === '/run/skilld/net'), { kind: 'bind', source: '/var/lib/skilld/net/job-78c062d598-0mwwr1guz', access: 'read_only', role: 'job' });
  t.match(plan.mounts.find((m) => m.path === '/run/skilld/bridge.cjs'), { kind: 'text', text: /skilld network bridge/ });
  t.same(plan.env, { IS_SANDBOX: '1', HTTPS_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost,127.0.0.1,::1' });
  const argv = bwrapArgv(plan, new Map(plan.mounts.map((mount, i) => [mount, 10 + i])), ['codex', 'exec'], {});
  t.ok(argv.indexOf('--unshare-net') > 0 && argv.indexOf('--unshare-net') < argv.indexOf('--'), 'loopback alone');
  t.same(argv.slice(argv.indexOf('--')), ['--', '/usr/bin/node', '/run/skilld/bridge.cjs', '127.0.0.1:3128=/run/skilld/net/proxy.sock', '127.0.0.1:11434=/run/skilld/net/forward-11434.sock', '--', '/usr/lib/node_modules/@openai/codex/bin/codex.js', 'exec']);
  const rooted = planSandbox({ ...SYSTEMD, user: { uid: 65534, gid: 65534, user: 'nobody', group: 'nogroup' }, switchUser: true, bridge: { kind: 'node', program: '/opt/node/bin/node', shown: ['/opt/node'] } }, NETWORKED);
  const rootArgv = bwrapArgv(rooted, new Map(rooted.mounts.map((mount, i) => [mount, 10 + i])), ['codex'], {});
  t.same(rootArgv.slice(rootArgv.indexOf('--') + 7, rootArgv.indexOf('--') + 10), ['--', '/opt/node/bin/node', '/run/skilld/bridge.cjs'], 'as root: setpriv first, so that the bridge too is the unprivileged user');
  t.match(rooted.mounts.find((m) => m.path === '/opt/node'), { kind: 'bind', access: 'read_only' }, "a node outside the system's folders is shown");
  const socat = planSandbox({ ...SYSTEMD, bridge: { kind: 'socat', program: '/usr/bin/socat', setpriv: '/usr/bin/setpriv' } }, NETWORKED);
  const socatArgv = bwrapArgv(socat, new Map(socat.mounts.map((mount, i) => [mount, 10 + i])), ['codex', 'exec'], {});
  t.same(socatArgv.slice(socatArgv.indexOf('--')), ['--', '/bin/sh', '/run/skilld/bridge.sh', '/usr/bin/setpriv', '/usr/bin/socat', '127.0.0.1:3128=/run/skilld/net/proxy.sock', '127.0.0.1:11434=/run/skilld/net/forward-11434.sock', '--', '/usr/lib/node_modules/@openai/codex/bin/codex.js', 'exec'], 'socat: a shell script in front of the engine, which it replaces');
  t.match(socat.mounts.find((m) => m.path === '/run/skilld/bridge.sh'), { kind: 'text', text: /skilld network bridge/ });
  t.notOk(socat.mounts.some((m) => m.path === '/run/skilld/bridge.cjs'), "no node bridge's script where socat bridges");
  const closed = planSandbox(SYSTEMD, { ...NETWORKED, network: { folder: '', listeners: [], env: {} } });
  t.notOk(closed.mounts.some((m) => m.path === '/run/skilld/net'), 'a network that could not be opened: no way out, no folder');
  t.same(closed.network?.listeners, []);
});
