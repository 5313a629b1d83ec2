// Writes on a full disk: whole or nothing, a stable code, and recovery once there is room again.
import t from 'tap';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SkilldError } from '../../rpc/errors.js';
import { AppendLog } from '../../daemon/store/append-log.js';
import { appendWhole, writeFileDurably } from '../../daemon/store/durable-file.js';
import { EventLog } from '../../daemon/store/event-log.js';
import { LowdbStore } from '../../daemon/store/lowdb-store.js';
import { systemClock } from '../../daemon/base/clock.js';
import { mountSmallDisk, type SmallDisk } from '../helpers/tmpfs.js';
import { storedEvents } from '../helpers/job-events.js';

const disk = await mountSmallDisk('256k');
const skip = typeof disk === 'string' ? disk : false;
if (typeof disk !== 'string') t.teardown(() => disk.unmount());
const small = disk as SmallDisk;

t.test('AppendLog: a batch that does not fit is cut back whole and rejected STORAGE_UNAVAILABLE; later appends work once there is room', { skip }, async (t) => {
  const path = join(small.dir, 'journal.wal');
  const log = new AppendLog(path);
  await log.open();
  t.teardown(() => log.close());
  const committed: string[] = [];
  await log.append('{"n":1}\n', () => committed.push('1'));
  await small.fill();
  const big = `${JSON.stringify({ n: 2, pad: 'x'.repeat(64 * 1024) })}\n`;
  const failure = await log.append(big, () => committed.push('2')).then(
    () => null,
    (error: unknown) => error,
  );
  t.ok(failure instanceof SkilldError && failure.code === 'STORAGE_UNAVAILABLE', 'STORAGE_UNAVAILABLE');
  t.match((failure as Error).message, /ENOSPC/);
  t.equal(await readFile(path, 'utf8'), '{"n":1}\n', 'no part of the failed batch is left in the file');
  t.same(committed, ['1'], 'a failed append is never committed');
  await small.free();
  await log.append('{"n":3}\n', () => committed.push('3'));
  t.equal(await readFile(path, 'utf8'), '{"n":1}\n{"n":3}\n', 'whole lines only, in order');
  t.equal(log.size, Buffer.byteLength('{"n":1}\n{"n":3}\n'));
  t.same(committed, ['1', '3']);
});

t.test('appendWhole cuts a failed append back; writeFileDurably leaves no temp file when it fails', { skip }, async (t) => {
  const path = join(small.dir, 'history.ndjson');
  await appendWhole(path, '[1]\n', true);
  await small.fill();
  await t.rejects(appendWhole(path, `${'x'.repeat(64 * 1024)}\n`, true), { code: 'ENOSPC' });
  t.equal(await readFile(path, 'utf8'), '[1]\n');
  await t.rejects(writeFileDurably(join(small.dir, 'result.json'), 'y'.repeat(64 * 1024)), { code: 'ENOSPC' });
  t.same((await readdir(small.dir)).filter((name) => name.includes('.tmp')), [], 'the temp file is gone');
  await small.free();
  await appendWhole(path, '[1,2]\n', true);
  t.equal(await readFile(path, 'utf8'), '[1]\n[1,2]\n');
});

t.test('LowdbStore: a job whose write fails is not kept, in memory or on disk; acknowledged ones survive a reopen', { skip }, async (t) => {
  const dir = join(small.dir, 'state');
  await mkdir(dir);
  const store = await LowdbStore.open(dir, () => new Date());
  const job = (n: number): Parameters<LowdbStore['putJob']>[0] => ({
    job_id: `job-${n}`, skill_id: 's', skill_version: '1', engine: 'codex', execution_mode: 'auto', status: 'queued',
    interactive_require_user_reply: true, session_timeout_sec: 1, hard_timeout_sec: 1, model: 'm'.repeat(n === 2 ? 64 * 1024 : 1),
    interactive_profile: null, attempt: 0, max_attempt: null, pending_interaction_id: null, wait_deadline_at: null, session_handle: null,
    warnings: [], error: null, created_at: new Date(n * 1000).toISOString(), updated_at: new Date(n * 1000).toISOString(), started_at: null, finished_at: null,
  });
  await store.putJob(job(1));
  await small.fill();
  await t.rejects(store.putJob(job(2)), { code: 'STORAGE_UNAVAILABLE' });
  t.equal(await store.getJob('job-2'), undefined);
  t.same((await store.activeJobs()).map((j) => j.job_id), ['job-1'], 'the hot state has no trace of it either');
  await small.free();
  await store.putJob(job(3));
  await store.close();
  const again = await LowdbStore.open(dir, () => new Date());
  t.teardown(() => again.close());
  t.same((await again.activeJobs()).map((j) => j.job_id), ['job-1', 'job-3']);
  t.same(again.notices, []);
});

t.test('EventLog: events that cannot be written wait in memory, are replayed in order, and are written once there is room', { skip }, async (t) => {
  const runs = join(small.dir, 'runs');
  await mkdir(join(runs, 'job-e'), { recursive: true });
  const events = new EventLog(runs, systemClock);
  events.emit('job-e', 'status_changed', { to: 'queued' });
  await storedEvents(events, 'job-e', 0);
  await small.fill();
  events.emit('job-e', 'output', { text: 'x'.repeat(64 * 1024) });
  events.emit('job-e', 'status_changed', { to: 'running' });
  t.same((await storedEvents(events, 'job-e', 0)).map((e) => e.seq), [1, 2, 3], 'replay includes what is not written yet');
  const file = join(runs, 'job-e', 'events.ndjson');
  t.equal((await readFile(file, 'utf8')).trim().split('\n').length, 1, 'only the first is in the file, whole');
  await small.free();
  events.emit('job-e', 'status_changed', { to: 'succeeded' });
  await events.close('job-e');
  const written = (await readFile(file, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { seq: number }).seq);
  t.same(written, [1, 2, 3, 4], 'gap-free once written');
});
