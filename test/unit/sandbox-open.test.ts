// Opening what a sandbox shows, once: a path resolved a single time and opened component by
// component without following a link; what a job's input names, checked on what was opened; the
// places of what is shown inside the job's home, made without following what the job left there.
import t from 'tap';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claim, jobHomes } from '../../daemon/sandbox/job-home.js';
import { refuseInputPaths } from '../../daemon/sandbox/input-paths.js';
import { installFolder, installedProgram, interpreterOf } from '../../daemon/sandbox/install-folder.js';
import { makePlace } from '../../daemon/sandbox/mount-points.js';
import { OpenPathError, openNoFollow, openResolved, pathOfFd } from '../../daemon/sandbox/open-path.js';
import { openPlan } from '../../daemon/sandbox/open-plan.js';
import type { Mount, SandboxPlan } from '../../daemon/sandbox/plan.js';

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skilld-open-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}


t.test('a path is opened without following a link in it; what was opened keeps its place through a rename', async (t) => {
  const dir = folder();
  mkdirSync(join(dir, 'a', 'b'), { recursive: true });
  mkdirSync(join(dir, 'secret'));
  const opened = openNoFollow(join(dir, 'a', 'b'));
  t.equal(opened.kind, 'dir');
  renameSync(join(dir, 'a'), join(dir, 'moved'));
  symlinkSync(join(dir, 'secret'), join(dir, 'a'));
  t.equal(pathOfFd(opened.fd), join(dir, 'moved', 'b'), 'the descriptor is the folder opened, wherever it is now');
  closeSync(opened.fd);
  t.throws(() => openNoFollow(join(dir, 'a', 'b')), OpenPathError, 'a link in place of a component is refused');
  t.throws(() => openNoFollow(join(dir, 'a')), /now a link/, 'a link as the last component too');
  t.throws(() => openNoFollow('relative/path'), /not an absolute path/);
  t.throws(() => openNoFollow(`${dir}/x/../secret`), /not a resolved path/);
  t.throws(() => openResolved(join(dir, 'nothing')), /does not exist/);
  const resolved = openResolved(join(dir, 'a'));
  t.equal(resolved.real, join(dir, 'secret'), 'the links of a path named by its owner are resolved once, before it is opened');
  closeSync(resolved.fd);
});

t.test('a job\'s input paths: absolute, present, none of the daemon\'s places, none inside another', async (t) => {
  const dir = folder();
  for (const name of ['state/runs', 'home/.ssh', 'home/project', 'srv/out/inner']) mkdirSync(join(dir, name), { recursive: true });
  const own = { places: [join(dir, 'state')], skills: [join(dir, 'skills')], home: join(dir, 'home') };
  const refused = (...given: Array<[string, string]>): string | undefined => refuseInputPaths(given.map(([name, path]) => ({ name, path, access: 'read_only' as const })), own)?.message;
  t.equal(refused(['a', join(dir, 'home', 'project')], ['b', join(dir, 'srv', 'out')]), undefined, 'a project below the home, and a folder elsewhere');
  t.match(refused(['a', 'home/project']), /input a: must be an absolute path/);
  t.match(refused(['a', join(dir, 'state', 'runs')]), /input a: .* is or holds one of the daemon's own places/);
  t.match(refused(['a', join(dir, 'home', '.ssh')]), /own places/, 'the home\'s dot-files');
  t.match(refused(['a', join(dir, 'srv', 'out')], ['b', join(dir, 'srv', 'out', 'inner')]), /input b: .* lies in or holds .*\(input a\): inputs may not nest/);
  symlinkSync(join(dir, 'state'), join(dir, 'srv', 'link'));
  t.match(refused(['a', join(dir, 'srv', 'link')]), /own places/, 'checked once its links are resolved');
});

t.test('the place of what is shown inside the job\'s home is made there, never through what the job left', async (t) => {
  const dir = folder();
  const home = join(dir, 'home');
  const outside = join(dir, 'outside');
  mkdirSync(home);
  mkdirSync(outside);
  // What a job could leave in its home between two turns: a link where a folder of the plan goes, and one where a file goes.
  symlinkSync(outside, join(home, '.codex'));
  mkdirSync(join(home, 'work'));
  symlinkSync(join(outside, 'planted'), join(home, 'work', 'auth.json'));
  const fd = openNoFollow(home).fd;
  makePlace(fd, '.codex/config.toml', true, null);
  makePlace(fd, 'work/auth.json', true, null);
  makePlace(fd, 'runs/job/workspace', false, null);
  closeSync(fd);
  t.ok(lstatSync(join(home, '.codex')).isDirectory(), 'the link was replaced by a folder');
  t.ok(lstatSync(join(home, '.codex', 'config.toml')).isFile());
  t.ok(lstatSync(join(home, 'work', 'auth.json')).isFile(), 'and the link in the file\'s place by an empty file');
  t.same([existsSync(join(outside, 'config.toml')), existsSync(join(outside, 'planted'))], [false, false], 'nothing was made where the links led');
  t.ok(lstatSync(join(home, 'runs', 'job', 'workspace')).isDirectory());
  mkdirSync(join(home, 'full'));
  writeFileSync(join(home, 'full', 'x'), '');
  const again = openNoFollow(home).fd;
  t.throws(() => makePlace(again, 'full', true, null), /not empty/, 'a folder the job filled where a file goes fails the start');
  closeSync(again);
});

t.test('a job\'s homes: made with its first engine process, the state files copied in then and never again', async (t) => {
  const dir = folder();
  const codexHome = join(dir, 'codex');
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, 'models_cache.json'), '{"models":[]}');
  const engine = { home: '/', folder: codexHome, settings: [], credentials: [], copied: [join(codexHome, 'models_cache.json')] };
  const run = join(dir, 'run');
  mkdirSync(run);
  t.same(jobHomes(engine, run, null), { home: null, engineHome: { path: codexHome, by: join(run, 'engine-home') } }, 'HOME `/` is not replaced: the engine home alone is');
  t.equal(readFileSync(join(run, 'engine-home', 'models_cache.json'), 'utf8'), '{"models":[]}', 'copied in when made');
  // The job replaces the copy by a link to a place outside; its next engine process must not write there.
  rmSync(join(run, 'engine-home', 'models_cache.json'));
  symlinkSync(join(dir, 'etc-like', 'made-by-daemon'), join(run, 'engine-home', 'models_cache.json'));
  jobHomes(engine, run, null);
  t.notOk(existsSync(join(dir, 'etc-like')), 'a home the job has had is not written again');
  t.equal(readlinkSync(join(run, 'engine-home', 'models_cache.json')), join(dir, 'etc-like', 'made-by-daemon'));

  const withHome = { home: join(dir, 'user'), folder: join(dir, 'user', '.codex'), settings: [], credentials: [], copied: [] };
  mkdirSync(join(dir, 'run2'));
  t.same(jobHomes(withHome, join(dir, 'run2'), null), { home: { path: join(dir, 'user'), by: join(dir, 'run2', 'home') }, engineHome: null });
  t.ok(lstatSync(join(dir, 'run2', 'home', '.codex')).isDirectory(), 'the engine\'s home folder is made in the job\'s home');
  t.doesNotThrow(() => claim(join(dir, 'run2', 'home'), null), 'nothing to give where the engine is the daemon\'s user');
});

t.test('where an engine is installed: the outermost node_modules, a prefix, its folder; narrower where refused', async (t) => {
  const never = (): boolean => false;
  t.equal(installFolder('/opt/app/node_modules/@openai/codex/bin/codex.js', never), '/opt/app/node_modules');
  t.equal(installFolder('/opt/app/node_modules/a/node_modules/b/cli.js', never), '/opt/app/node_modules', 'dependencies are hoisted to the outermost');
  t.equal(installFolder('/opt/codex/bin/codex', never), '/opt/codex');
  t.equal(installFolder('/srv/tools/codex', never), '/srv/tools');
  t.equal(installFolder('/home/al/bin/codex', (folder) => folder === '/home/al'), '/home/al/bin', 'a prefix that is the daemon user\'s home is not shown');
  t.equal(installFolder('/home/al/codex', (folder) => folder === '/home/al'), '/home/al/codex', 'the program alone, at the last');
  const dir = folder();
  writeFileSync(join(dir, 'engine'), '#!/usr/bin/env -S node --no-warnings\n', { mode: 0o755 });
  t.equal(interpreterOf(join(dir, 'engine'), process.env['PATH'], dir), process.execPath, 'the interpreter `env -S` names, found on PATH');
  writeFileSync(join(dir, 'binary'), 'ELF', { mode: 0o755 });
  t.equal(interpreterOf(join(dir, 'binary'), process.env['PATH'], dir), null);
  symlinkSync(join(dir, 'engine'), join(dir, 'on-path'));
  t.same(installedProgram('on-path', dir, dir, never), { program: join(dir, 'engine'), shown: [dir] }, 'by its real path; node lies in /usr, shown to every sandbox');
  t.equal(installedProgram('missing', dir, dir, never), null);
});

t.test('opening a plan: a path of the input that turned into one of the daemon\'s places, or nests, is left out', async (t) => {
  const dir = folder();
  for (const name of ['state/runs', 'home', 'work', 'shared/inner', 'skill']) mkdirSync(join(dir, name), { recursive: true });
  // The input named `dir/flip`, checked at create; since then it became a link to the state folder.
  symlinkSync(join(dir, 'state'), join(dir, 'flip'));
  const bind = (path: string, access: 'read_only' | 'read_write', role: 'input' | 'job' | 'home', source = path): Mount => ({ kind: 'bind', path, source, access, what: '', role });
  const plan: SandboxPlan = {
    mounts: [
      bind(join(dir, 'shared'), 'read_write', 'input'),
      bind(join(dir, 'flip'), 'read_only', 'input'),
      bind(join(dir, 'shared', 'inner'), 'read_only', 'input'),
      bind(join(dir, 'work'), 'read_write', 'job'),
      { kind: 'text', path: '/etc/passwd', text: 'root:x:0:0::/:/bin/sh\n', what: '' },
    ],
    cwd: join(dir, 'work'),
    env: {},
    runAs: null,
    program: null,
    network: null,
    own: { places: [join(dir, 'state')], skills: [], home: join(dir, 'home') },
  };
  const opened = openPlan(plan, join(dir, 'scratch'));
  t.teardown(() => opened.close());
  t.same(opened.plan.mounts.map((m) => m.path), [join(dir, 'shared'), join(dir, 'work'), '/etc/passwd']);
  t.match(opened.left, [{ path: join(dir, 'flip'), why: /daemon's own places/ }, { path: join(dir, 'shared', 'inner'), why: /lies in .*shared, which the sandbox shows too/ }]);
  t.equal(opened.fds.size, 3, 'a descriptor for each mount that is shown');
  t.equal(readFileSync(`/proc/self/fd/${opened.fds.get(opened.plan.mounts[2] as Mount) ?? -1}`, 'utf8'), 'root:x:0:0::/:/bin/sh\n', 'a text as a file of the daemon\'s, open for reading');
  const inJob = { ...plan, mounts: [bind(join(dir, 'work'), 'read_write', 'job'), bind(join(dir, 'work', 'x'), 'read_only', 'job', join(dir, 'skill'))] };
  t.throws(() => openPlan(inJob, join(dir, 'scratch')), /lies in .*work, which the sandbox shows too/, 'what nests in a folder other than the job\'s home fails the start');
  const inHome = { ...plan, mounts: [bind('/h', 'read_write', 'home', join(dir, 'home')), bind('/h/skill', 'read_only', 'job', join(dir, 'skill'))] };
  openPlan(inHome, join(dir, 'scratch')).close();
  t.ok(lstatSync(join(dir, 'home', 'skill')).isDirectory(), 'its place made in the job\'s home');
});
