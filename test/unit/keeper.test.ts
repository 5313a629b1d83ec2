import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, closeSync, existsSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { joinGroupsArgv } from '../../daemon/process/cgroup.js';
import { FileFollower } from '../../daemon/process/file-follower.js';
import { GATE_FD, KEEPER_FILES, forgetRecord, gatedArgv, readExitCode, readRecord, setRecordAside, turnWasStarted } from '../../daemon/process/keeper.js';
import { exitOf } from '../../daemon/process/kept-process.js';

t.test('a follower reads what is there and what comes, tells the first lines as replayed, and copies only what is new', async (t) => {
  const file = join(t.testdir(), 'stdout.log');
  writeFileSync(file, 'one\ntwo\nthr');
  const lines: string[] = [];
  const copied: Buffer[] = [];
  const follower = new FileFollower(file, 1024, 2, {
    line: (text, replayed) => lines.push(`${replayed ? 'old' : 'new'}:${text}`),
    overflow: (bytes, replayed) => lines.push(`${replayed ? 'old' : 'new'}:overflow ${bytes}`),
    bytes: (chunk) => copied.push(Buffer.from(chunk)),
  });
  // A line completed after the start, then one too long, then a last one without its newline.
  await new Promise((resolve) => setTimeout(resolve, 20));
  appendFileSync(file, `ee\n${'x'.repeat(2000)}\nlast`);
  await follower.finish();
  t.match(lines, ['old:one', 'old:two', 'new:three', /^new:overflow \d+$/, 'new:last']);
  t.equal(lines.length, 5);
  t.equal(Buffer.concat(copied).toString(), `three\n${'x'.repeat(2000)}\nlast`, 'the bytes of the lines not told before');
});

t.test('a follower of a file that is not there reads nothing; one closed early leaves the rest', async (t) => {
  const lines: string[] = [];
  const sink = { line: (text: string) => lines.push(text), overflow: () => undefined };
  await new FileFollower(join(t.testdir(), 'missing'), 1024, 0, sink).finish();
  const file = join(t.testdir(), 'out');
  writeFileSync(file, 'a\n');
  const closed = new FileFollower(file, 1024, 0, sink);
  await closed.close();
  await closed.finish();
  t.same(lines, []);
});

t.test("a keeper's record and exit status: what can be read, and why not", async (t) => {
  const dir = t.testdir();
  t.match(readRecord(dir), { problem: 'no keeper was recorded' });
  writeFileSync(join(dir, KEEPER_FILES.record), '{');
  t.match(readRecord(dir), { problem: 'its keeper record cannot be read' });
  writeFileSync(join(dir, KEEPER_FILES.record), JSON.stringify({ keeper: 7 }));
  t.match(readRecord(dir), { problem: /protocol version 7/ });
  writeFileSync(join(dir, KEEPER_FILES.record), JSON.stringify({ keeper: 1, job_id: 'job-x' }));
  t.match(readRecord(dir), { keeper: 1, job_id: 'job-x' });
  setRecordAside(dir);
  t.match(readRecord(dir), { problem: /stopped it on purpose/ });
  setRecordAside(dir); // nothing left to set aside

  t.equal(readExitCode(dir), null, 'no status yet');
  writeFileSync(join(dir, KEEPER_FILES.status), '{ "child-pid": 12, "pid-namespace": 4026532177 }\n{ "exit-');
  t.equal(readExitCode(dir), null, 'a sandbox still running, its last line being written');
  appendFileSync(join(dir, KEEPER_FILES.status), 'code": 143 }\n');
  t.equal(readExitCode(dir), 143);
  t.same(exitOf(143, null), { code: null, signal: 'SIGTERM', spawnError: null }, '128 + a signal is that signal');
  t.same(exitOf(3, null), { code: 3, signal: null, spawnError: null });
  t.same(exitOf(128 + 99, null), { code: 227, signal: null, spawnError: null }, 'a code past the signals is a code');
});

/** Spawns `touch ran` behind the gate, as the spawner does (status on fd 3, the gate's pipe on fd 4); `open` says whether the daemon opens it or dies first. */
async function throughGate(dir: string, open: boolean, joining = false): Promise<number | null> {
  const status = openSync(join(dir, KEEPER_FILES.status), 'w');
  const keeper = ['/bin/sh', '-c', 'touch ran'];
  const [file, ...args] = gatedArgv(joining ? joinGroupsArgv([], keeper) : keeper) as [string, ...string[]];
  const child = spawn(file, args, { cwd: dir, stdio: ['ignore', 'ignore', 'ignore', status, 'pipe'] });
  closeSync(status);
  const gate = child.stdio[GATE_FD] as Writable;
  if (open) gate.end('go\n');
  else gate.destroy(); // the daemon's end closes, as when it is killed
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

t.test('the gate runs the keeper only once the daemon opens it; closed unopened, nothing runs and the status says so', async (t) => {
  const opened = t.testdir({ 'keeper.json': '{}' });
  t.equal(await throughGate(opened, true), 0);
  t.ok(existsSync(join(opened, 'ran')), 'the keeper ran');
  t.ok(turnWasStarted(opened), 'a turn with a record and an opened gate was started');

  const closed = t.testdir({ 'keeper.json': '{}' });
  t.equal(await throughGate(closed, false), 125);
  t.notOk(existsSync(join(closed, 'ran')), 'nothing ran');
  t.equal(readExitCode(closed), null, 'no exit status of an engine');
  t.notOk(turnWasStarted(closed), 'a gate that closed unopened: the turn never began, though its record is there');
});

t.test('in front of the shell that joins the groups, the gate is a line of its script: one shell, the same gate', async (t) => {
  const argv = gatedArgv(joinGroupsArgv(['/sys/fs/cgroup/x'], ['/bin/true']));
  t.equal(argv.filter((arg) => arg === '/bin/sh').length, 1, 'one shell');
  t.same(argv.slice(3), ['skilld-join', '1', '/sys/fs/cgroup/x', '/bin/true']);
  const opened = t.testdir({ 'keeper.json': '{}' });
  t.equal(await throughGate(opened, true, true), 0);
  t.ok(existsSync(join(opened, 'ran')));
  const closed = t.testdir({ 'keeper.json': '{}' });
  t.equal(await throughGate(closed, false, true), 125);
  t.notOk(existsSync(join(closed, 'ran')));
  t.notOk(turnWasStarted(closed));
});

t.test('a turn was started when its keeper is recorded or was put aside; not after forgetRecord', async (t) => {
  const dir = t.testdir({ 'keeper.json': '{}', 'keeper.stopped.json': '{}' });
  t.ok(turnWasStarted(dir));
  forgetRecord(dir);
  t.notOk(turnWasStarted(dir), 'forgetting removes both the record and one put aside');
  writeFileSync(join(dir, 'keeper.json'), '{}');
  setRecordAside(dir);
  t.ok(turnWasStarted(dir), 'a record put aside is a turn that began');
});
