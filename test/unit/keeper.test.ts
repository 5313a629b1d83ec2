import t from 'tap';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileFollower } from '../../daemon/process/file-follower.js';
import { KEEPER_FILES, readExitCode, readRecord, setRecordAside } from '../../daemon/process/keeper.js';
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
