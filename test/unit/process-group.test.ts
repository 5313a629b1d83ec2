// A process group whose only member is a zombie (ended, its parent not collecting it: a keeper
// taken up after a restart, whose parent is then PID 1) is not alive: a stop waiting for the
// group to be gone must not wait out its grace period for it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { groupAlive } from '../../daemon/process/group.js';
import { readStat } from '../../daemon/process/proc.js';

/** Waits until `read` gives a value, looking again after each turn of the event loop. */
async function until<T>(read: () => T | null): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('a group of one zombie is not alive; a group with a live member is', async (t) => {
  // `setsid true` runs in a group of its own and ends; its parent, now `sleep`, never collects it.
  const parent = spawn('/bin/sh', ['-c', 'setsid true & exec sleep 60'], { stdio: 'ignore', detached: true });
  t.teardown(() => parent.kill('SIGKILL'));
  const pid = parent.pid as number;
  const zombie = await until(() => {
    const [child] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    const stat = child === undefined ? null : readStat(child);
    return stat?.state === 'Z' ? stat : null;
  });
  t.equal(zombie.pgid, zombie.pid, 'the zombie leads a group of its own');
  t.equal(groupAlive(zombie.pgid), false, 'its group is not alive, though the kernel still knows it');
  t.equal(groupAlive(pid), true, 'the group of a running process (its parent, which leads one) is alive');
});

t.test('a group that is gone is not alive', async (t) => {
  const child = spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore', detached: true });
  await new Promise((resolve) => child.once('exit', resolve));
  t.equal(groupAlive(child.pid as number), false);
});
