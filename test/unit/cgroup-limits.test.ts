// Where a job's process and memory limits can be set (cgroup-limits.ts): a cgroup v2 that hands
// the controllers down, else the daemon's group in a cgroup v1 hierarchy; how an engine joins its
// v1 groups, how hits are read, and what is removed. The kernel's own enforcement is checked in
// test/e2e/limits.test.ts; here, folders stand in for cgroup file systems.
import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { joinCgroupArgv } from '../../daemon/process/cgroup.js';
import { V1Groups, limitHit, probeLimits, setV2Limits, sweepV1 } from '../../daemon/process/cgroup-limits.js';

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skilld-limits-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A host with cgroup v1 pids and memory hierarchies, as /proc/self/mountinfo and /proc/self/cgroup say. */
function v1Host(dir: string): { mountinfo: string; cgroup: string } {
  mkdirSync(join(dir, 'pids', 'svc'), { recursive: true });
  mkdirSync(join(dir, 'memory', 'svc'), { recursive: true });
  writeFileSync(join(dir, 'mountinfo'), [
    `30 25 0:26 / ${dir}/pids rw,relatime - cgroup cgroup rw,pids`,
    `31 25 0:27 /outer ${dir}/memory rw,relatime - cgroup cgroup rw,memory`,
    `32 25 0:28 / ${dir}/unified rw - cgroup2 cgroup2 rw`,
  ].join('\n'));
  writeFileSync(join(dir, 'cgroup'), ['8:pids:/svc', '4:memory:/outer/svc', '0::/'].join('\n'));
  return { mountinfo: join(dir, 'mountinfo'), cgroup: join(dir, 'cgroup') };
}

t.test('cgroup v1: the daemon\'s own group in each hierarchy, under its mount', async (t) => {
  const dir = folder();
  const support = probeLimits(null, v1Host(dir));
  t.same(support, { processes: { by: 'cgroup v1', parent: join(dir, 'pids', 'svc') }, memory: { by: 'cgroup v1', parent: join(dir, 'memory', 'svc') } });
  const none = folder();
  writeFileSync(join(none, 'mountinfo'), '');
  writeFileSync(join(none, 'cgroup'), '0::/\n');
  t.match(probeLimits(null, { mountinfo: join(none, 'mountinfo'), cgroup: join(none, 'cgroup') }), { processes: { by: null, problem: 'no cgroup v1 hierarchy of pids' }, memory: { by: null, problem: 'no cgroup v1 hierarchy of memory' } }, 'neither: why not');
});

t.test('cgroup v2: where the daemon\'s cgroup hands pids and memory down, the engine\'s own cgroup holds the limits', async (t) => {
  const dir = folder();
  const v2 = join(dir, 'v2');
  mkdirSync(v2);
  writeFileSync(join(v2, 'cgroup.controllers'), 'cpu memory pids\n');
  writeFileSync(join(v2, 'cgroup.subtree_control'), 'memory pids\n');
  const none = folder();
  writeFileSync(join(none, 'mountinfo'), '');
  writeFileSync(join(none, 'cgroup'), '');
  t.same(probeLimits(v2, { mountinfo: join(none, 'mountinfo'), cgroup: join(none, 'cgroup') }), { processes: { by: 'cgroup v2' }, memory: { by: 'cgroup v2' } });
  const engine = join(v2, 'skilld-job-1');
  mkdirSync(engine);
  writeFileSync(join(engine, 'memory.swap.max'), 'max\n');
  setV2Limits(engine, { processes: 512, memory: 4096 * 1024 }, ['processes', 'memory']);
  t.same([readFileSync(join(engine, 'pids.max'), 'utf8'), readFileSync(join(engine, 'memory.max'), 'utf8'), readFileSync(join(engine, 'memory.swap.max'), 'utf8')], ['512', '4194304', '0'], 'memory without swap');
  writeFileSync(join(engine, 'pids.events'), 'max 0\n');
  writeFileSync(join(engine, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
  t.same(limitHit(engine, 2, { processes: 512, memory: 4096 * 1024 }, ['processes', 'memory']), { limit: 'memory', value: 4096 * 1024 });
  writeFileSync(join(engine, 'memory.events'), 'oom_kill 0\n');
  t.equal(limitHit(engine, 2, { processes: 512, memory: 4096 * 1024 }, ['processes', 'memory']), null, 'none hit');
});

t.test('cgroup v1 groups of an engine: made and limited, joined by its first process, read, removed', async (t) => {
  const dir = folder();
  const support = probeLimits(null, v1Host(dir));
  const groups = new V1Groups(support, 'job-abc', { processes: 64, memory: null });
  t.same(groups.dirs, [{ name: 'processes', dir: join(dir, 'pids', 'svc', 'skilld-job-abc-1') }], 'a group for each limit set');
  t.equal(readFileSync(join(groups.dirs[0]?.dir ?? '', 'pids.max'), 'utf8'), '64');
  t.same(joinCgroupArgv(join(dir, 'v2-engine'), ['bwrap', '--args', '4'], groups.paths).slice(3), ['skilld-join', '2', join(dir, 'v2-engine'), join(dir, 'pids', 'svc', 'skilld-job-abc-1'), 'bwrap', '--args', '4'], 'one shell joins the engine\'s cgroup and its groups, then starts the command');
  writeFileSync(join(groups.dirs[0]?.dir ?? '', 'pids.events'), 'max 7\n');
  t.same(groups.hit(), { limit: 'processes', value: 64 });
  const second = new V1Groups(support, 'job-abc', { processes: 64, memory: 1 << 30 });
  t.same(second.dirs.map((one) => one.dir), [join(dir, 'pids', 'svc', 'skilld-job-abc-2'), join(dir, 'memory', 'svc', 'skilld-job-abc-1')], 'a name not yet taken');
  for (const one of [...groups.dirs, ...second.dirs]) for (const file of ['pids.max', 'pids.events', 'memory.limit_in_bytes']) rmSync(join(one.dir, file), { force: true });
  groups.remove();
  t.notOk(existsSync(join(dir, 'pids', 'svc', 'skilld-job-abc-1')));
  t.same(new V1Groups(support, 'job-x', { processes: null, memory: null }).paths, [], 'no limit: no group');
  mkdirSync(join(dir, 'pids', 'svc', 'skilld-job-other-1'));
  await sweepV1(support, (jobId) => Promise.resolve(jobId === 'job-abc'));
  t.same([existsSync(second.dirs[0]?.dir ?? ''), existsSync(join(dir, 'pids', 'svc', 'skilld-job-other-1'))], [false, true], 'the sweep removes the empty groups of its own jobs alone');
});
