// The sandbox's contract as a value: what is hidden, shown read-only and read-write, in which
// order; its bubblewrap command line; and docs/sandbox.md's table, written from the same value.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bwrapArgv } from '../../daemon/sandbox/bwrap.js';
import { describePlan } from '../../daemon/sandbox/describe.js';
import { planSandbox, type DaemonPaths, type JobPaths, type Shown } from '../../daemon/sandbox/plan.js';
import { ROOT } from '../helpers/daemon.js';

/** README's systemd set-up: the unit's folders, the example config, HOME=/var/lib/skilld. */
const SYSTEMD: DaemonPaths = {
  stateDir: '/var/lib/skilld',
  skillsDirs: ['/var/lib/skilld/skills', '/usr/lib/node_modules/skilld/skills'],
  socketDir: '/run/skilld',
  configFile: '/etc/skilld/config.json',
  home: '/var/lib/skilld',
  runtimeDir: null,
  engineHomes: [],
};
const RUN = '/var/lib/skilld/runs/job-78c062d598-0mwwr1guz';
/** A Codex job: its home in place of HOME; the configured home's config.toml and auth.json shared. */
const JOB: JobPaths = {
  workspace: join(RUN, 'workspace'),
  skill: join(RUN, 'skill'),
  attempts: join(RUN, 'attempts'),
  homes: [{ path: '/var/lib/skilld', by: join(RUN, 'home') }],
  shared: { readOnly: ['/var/lib/skilld/.codex/config.toml'], readWrite: ['/var/lib/skilld/.codex/auth.json'] },
  extra: { readOnly: [], readWrite: [] },
  input: { readOnly: [], readWrite: [] },
};
const paths = (shown: readonly Shown[]): string[] => shown.map(({ path }) => path);

t.test('the plan hides the daemon\'s folders, outermost first, then shows the job\'s own', async (t) => {
  const plan = planSandbox(SYSTEMD, JOB);
  t.same(plan.system, ['/']);
  t.same(
    plan.covered,
    [
      { path: '/tmp', by: null },
      { path: '/run/skilld', by: null },
      { path: '/var/lib/skilld', by: join(RUN, 'home') },
      { path: '/usr/lib/node_modules/skilld/skills', by: null },
    ],
    'each once, a folder before those below it; the state folder, which is HOME too, replaced by the job\'s home with all below it',
  );
  t.same(plan.hiddenFiles, ['/etc/skilld/config.json']);
  t.same(paths(plan.readOnly), [JOB.skill, JOB.attempts, '/var/lib/skilld/.codex/config.toml']);
  t.same(paths(plan.readWrite), [JOB.workspace, '/var/lib/skilld/.codex/auth.json']);
  t.equal(plan.cwd, JOB.workspace);
  t.same(plan.env, { IS_SANDBOX: '1' });
});

t.test('a user\'s defaults: home, runtime folder and the socket below it, state below the home', async (t) => {
  const plan = planSandbox(
    { stateDir: '/home/al/.local/state/skilld', skillsDirs: ['/home/al/.local/share/skilld/skills'], socketDir: '/run/user/1000/skilld', configFile: null, home: '/home/al', runtimeDir: '/run/user/1000', engineHomes: ['/srv/gemini/.gemini'] },
    { ...JOB, homes: [{ path: '/home/al', by: join(RUN, 'home') }], extra: { readOnly: ['/opt/tools'], readWrite: ['/srv/cache'] }, input: { readOnly: ['/home/al/project'], readWrite: ['/srv/out'] } },
  );
  t.same(
    plan.covered.map(({ path, by }) => (by === null ? path : `${path} <- ${by}`)),
    ['/tmp', `/home/al <- ${RUN}/home`, '/run/user/1000', '/srv/gemini/.gemini', '/run/user/1000/skilld'],
    'the state and skills folders below HOME are out of sight with it; another engine\'s configured home hidden',
  );
  t.same(plan.hiddenFiles, [], 'no config file was read');
  t.same(paths(plan.readOnly), [JOB.skill, JOB.attempts, '/var/lib/skilld/.codex/config.toml', '/opt/tools', '/home/al/project'], 'extra read-only paths after the job\'s own, then what its input names');
  t.same(paths(plan.readWrite), [JOB.workspace, '/var/lib/skilld/.codex/auth.json', '/srv/cache', '/srv/out']);
});

t.test('the command line: new namespaces, the system read-only, then what is hidden, then the job\'s own, then the engine', async (t) => {
  const argv = bwrapArgv(planSandbox(SYSTEMD, JOB), ['codex', 'exec', '--', '-starts with a dash']);
  t.same(argv.slice(0, 5), ['bwrap', '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts']);
  t.notOk(argv.includes('--unshare-net'), 'the network is shared');
  t.notOk(argv.includes('--die-with-parent'), 'an engine does not end with the daemon');
  t.notOk(argv.includes('--disable-userns'), 'an engine may sandbox its own tools');
  const at = (...words: string[]): number => argv.findIndex((_, i) => words.every((w, j) => argv[i + j] === w));
  t.ok(at('--ro-bind', '/', '/') < at('--tmpfs', '/tmp'), 'the system first');
  t.ok(at('--tmpfs', '/tmp') < at('--bind', join(RUN, 'home'), '/var/lib/skilld'), 'a folder before those below it');
  t.equal(at('--tmpfs', '/var/lib/skilld/skills'), -1, 'nothing is hidden again below the job\'s home');
  t.ok(at('--bind', join(RUN, 'home'), '/var/lib/skilld') < at('--bind', JOB.workspace, JOB.workspace), 'the state covered before the workspace is bound back');
  t.ok(at('--ro-bind', '/var/lib/skilld/.codex/config.toml', '/var/lib/skilld/.codex/config.toml') > at('--bind', join(RUN, 'home'), '/var/lib/skilld'), 'settings shown over the job\'s home');
  t.ok(at('--ro-bind', '/dev/null', '/etc/skilld/config.json') > 0, 'the config file replaced by an empty one');
  t.ok(at('--ro-bind', JOB.skill, JOB.skill) > at('--bind', join(RUN, 'home'), '/var/lib/skilld'), 'the skill snapshot read-only');
  t.same(argv.slice(at('--chdir')), ['--chdir', JOB.workspace, '--', 'codex', 'exec', '--', '-starts with a dash'], 'the engine\'s argv after --, untouched');
});

t.test('docs/sandbox.md shows the plan of the systemd set-up as the code builds it', async (t) => {
  const doc = await readFile(join(ROOT, 'docs', 'sandbox.md'), 'utf8');
  const block = /<!-- plan:systemd -->\n([\s\S]*?)\n<!-- \/plan:systemd -->/.exec(doc)?.[1];
  t.equal(block, describePlan(planSandbox(SYSTEMD, JOB)));
});
