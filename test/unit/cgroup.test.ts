import t from 'tap';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../daemon/base/clock.js';
import { cgroupDirOf, engineCgroupName, jobOfCgroup, parseCgroup2Mounts, parseOwnCgroup, probeCgroups, type CgroupProbe } from '../../daemon/process/cgroup.js';
import { chooseContainment } from '../../daemon/process/choose-containment.js';

const HYBRID_MOUNTINFO = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  '',
].join('\n');

const UNIFIED_MOUNTINFO = [
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
  '35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
].join('\n');

t.test('parseCgroup2Mounts finds the cgroup2 mount of a hybrid and of a unified hierarchy, optional fields or not', async (t) => {
  t.same(parseCgroup2Mounts(HYBRID_MOUNTINFO), [{ root: '/', mountPoint: '/sys/fs/cgroup/unified' }]);
  t.same(parseCgroup2Mounts(UNIFIED_MOUNTINFO), [{ root: '/', mountPoint: '/sys/fs/cgroup' }]);
  t.same(parseCgroup2Mounts('32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n'), [], 'cgroup v1 only: none');
  t.same(parseCgroup2Mounts('garbage line\n\n'), []);
});

t.test('parseCgroup2Mounts decodes octal escapes in the root and the mount point', async (t) => {
  t.same(parseCgroup2Mounts('50 22 0:40 /my\\040slice /mnt/cg\\134two rw - cgroup2 cgroup2 rw'), [{ root: '/my slice', mountPoint: '/mnt/cg\\two' }]);
});

t.test('parseOwnCgroup reads the 0:: line, and only it', async (t) => {
  t.equal(parseOwnCgroup('9:name=systemd:/\n4:memory:/x/y\n0::/\n'), '/');
  t.equal(parseOwnCgroup('0::/system.slice/skilld.service\n'), '/system.slice/skilld.service');
  t.equal(parseOwnCgroup('4:memory:/x\n1:cpu:/\n'), null, 'cgroup v1 only');
  t.equal(parseOwnCgroup('0::\n'), null, 'an empty path');
});

t.test('cgroupDirOf places the cgroup under the mount whose root holds it', async (t) => {
  const root = [{ root: '/', mountPoint: '/sys/fs/cgroup' }];
  t.equal(cgroupDirOf(root, '/'), '/sys/fs/cgroup', 'the root cgroup is the mount point itself, no trailing slash');
  t.equal(cgroupDirOf(root, '/system.slice/skilld.service'), '/sys/fs/cgroup/system.slice/skilld.service');
  const subtree = [{ root: '/system.slice', mountPoint: '/mnt/cg' }];
  t.equal(cgroupDirOf(subtree, '/system.slice/skilld.service'), '/mnt/cg/skilld.service', 'a mount of a subtree');
  t.equal(cgroupDirOf(subtree, '/system.slice'), '/mnt/cg');
  t.equal(cgroupDirOf(subtree, '/system.slicer/x'), null, 'a name that only starts like the root is outside it');
  t.equal(cgroupDirOf([], '/'), null);
});

t.test('an engine cgroup name carries its job id back, hyphens and all; other names carry none', async (t) => {
  const name = engineCgroupName('job-0mwt4gld5-a352a2afb2', 12);
  t.equal(name, 'skilld-job-0mwt4gld5-a352a2afb2-12');
  t.equal(jobOfCgroup(name), 'job-0mwt4gld5-a352a2afb2');
  t.equal(jobOfCgroup('skilld-job-1'), 'job');
  t.equal(jobOfCgroup('skilld-job-x'), null, 'no sequence number');
  t.equal(jobOfCgroup('other-job-1-2'), null, 'not ours');
  t.equal(jobOfCgroup('skilld-'), null);
});

t.test('probeCgroups says why cgroups cannot be used', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-cgroup-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const files = async (mountinfo: string, cgroup: string): Promise<{ mountinfo: string; cgroup: string }> => {
    await writeFile(join(dir, 'mountinfo'), mountinfo);
    await writeFile(join(dir, 'cgroup'), cgroup);
    return { mountinfo: join(dir, 'mountinfo'), cgroup: join(dir, 'cgroup') };
  };
  t.match(await probeCgroups(await files(HYBRID_MOUNTINFO, '4:memory:/x\n')), { usable: false, problem: /no cgroup v2 entry/ });
  t.match(await probeCgroups(await files('', '0::/\n')), { usable: false, problem: 'no cgroup2 mount holds cgroup /' });
  t.match(await probeCgroups(await files(`1 1 0:1 / ${join(dir, 'missing')} rw - cgroup2 cgroup2 rw`, '0::/\n')), { usable: false, problem: /^cannot create a cgroup in / });
  const plain = join(dir, 'plain');
  await mkdir(plain);
  t.match(await probeCgroups(await files(`1 1 0:1 / ${plain} rw - cgroup2 cgroup2 rw`, '0::/\n')), { usable: false, problem: /^no cgroup\.kill under / }, 'a folder that is not cgroupfs has no cgroup.kill');
  t.same(await readdir(plain), [], 'the probe removes what it created');
});

t.test('chooseContainment: auto falls back with the reason, cgroup refuses, process_group does not probe', async (t) => {
  const unusable = async (): Promise<CgroupProbe> => ({ usable: false, problem: 'no cgroup2 mount holds cgroup /' });
  const auto = await chooseContainment('auto', systemClock, 100, unusable);
  t.same(auto.containment.view, { kind: 'process_group' });
  t.equal(auto.fallback, 'no cgroup2 mount holds cgroup /');
  await t.rejects(chooseContainment('cgroup', systemClock, 100, unusable), { message: 'process_containment is "cgroup", but cgroup v2 cannot be used: no cgroup2 mount holds cgroup /' });
  let probed = false;
  const pinned = await chooseContainment('process_group', systemClock, 100, () => {
    probed = true;
    return unusable();
  });
  t.same(pinned.containment.view, { kind: 'process_group' });
  t.equal(pinned.fallback, null);
  t.notOk(probed, 'process_group does not probe');
  const usable = await chooseContainment('cgroup', systemClock, 100, async () => ({ usable: true, dir: '/sys/fs/cgroup/x' }));
  t.same(usable.containment.view, { kind: 'cgroup', path: '/sys/fs/cgroup/x' });
  t.equal(usable.fallback, null);
});
