// A job's events.ndjson read a page at a time: bounded pages, a cursor that resumes where the last
// page ended, lines a crash tore passed over, and a torn end cut off when a later daemon goes on.
import t, { type Test } from 'tap';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../daemon/base/clock.js';
import { EventLog } from '../../daemon/store/event-log.js';
import { readEventPage } from '../../daemon/store/event-file.js';
import { storedEvents } from '../helpers/job-events.js';
import { cursorAfter, type JobEventRecord } from '../../daemon/model/events.js';

const clock: Clock = { now: () => new Date('2026-01-01T00:00:00Z'), setTimer: () => ({ cancel: () => undefined }) };

function line(seq: number, text = `line ${seq}`): string {
  const event: JobEventRecord = { job_id: 'job-1', seq, ts: '2026-01-01T00:00:00.000Z', type: 'output', data: { stream: 'stdout', text } };
  return `${JSON.stringify(event)}\n`;
}

async function logFile(t: Test, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-events-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'events.ndjson');
  await writeFile(path, text);
  return path;
}

t.test('pages hold about maxBytes of events, at least one, and the cursor goes on from where a page ended', async (t) => {
  const text = Array.from({ length: 50 }, (_, i) => line(i + 1, 'x'.repeat(i === 20 ? 5000 : 100))).join('');
  const path = await logFile(t, text);
  const seen: number[] = [];
  let cursor = cursorAfter(0);
  let pages = 0;
  for (let end = false; !end; pages += 1) {
    const page = await readEventPage(path, cursor, 1000);
    t.ok(page.events.length >= 1 || page.end, 'a page that is not the end holds an event');
    t.ok(page.events.reduce((n, e) => n + JSON.stringify(e).length, 0) < 1000 + 5200, 'a page stops once it holds maxBytes');
    seen.push(...page.events.map((e) => e.seq));
    ({ cursor, end } = page);
  }
  t.same(seen, Array.from({ length: 50 }, (_, i) => i + 1), 'every event once, in order');
  t.ok(pages > 5, `read in ${pages} pages`);
  t.equal(cursor.at, Buffer.byteLength(text), 'the last cursor stands at the end of the file');
});

t.test('a cursor whose position is not at the start of a line is read from the start of the file, by seq', async (t) => {
  const path = await logFile(t, [1, 2, 3, 4].map((n) => line(n)).join(''));
  const page = await readEventPage(path, { seq: 2, at: 7 }, 1 << 20);
  t.same(page.events.map((e) => e.seq), [3, 4]);
  const past = await readEventPage(path, { seq: 4, at: page.cursor.at }, 1 << 20);
  t.same(past, { events: [], cursor: page.cursor, end: true }, 'nothing after the last event');
});

t.test('a torn line is passed over; a missing file has no events', async (t) => {
  const path = await logFile(t, `${line(1)}${line(2).slice(0, 30)}${line(3)}`);
  t.same((await readEventPage(path, cursorAfter(0), 1 << 20)).events.map((e) => e.seq), [1, 3]);
  t.same((await readEventPage(path, cursorAfter(2), 1 << 20)).events.map((e) => e.seq), [3], 'the whole line after a torn one is found from after the torn seq too');
  t.same(await readEventPage(join(path, '..', 'none.ndjson'), cursorAfter(0), 1 << 20), { events: [], cursor: cursorAfter(0), end: true });
});

t.test('prime: a log whose last line a crash tore is cut back, so the next event starts a line of its own', async (t) => {
  const runs = await mkdtemp(join(tmpdir(), 'skilld-events-'));
  t.teardown(() => rm(runs, { recursive: true, force: true }));
  await mkdir(join(runs, 'job-1'));
  const path = join(runs, 'job-1', 'events.ndjson');
  await writeFile(path, `${line(1)}${line(2)}`);
  await appendFile(path, line(3).slice(0, 40));
  const log = new EventLog(runs, clock);
  await log.prime('job-1');
  log.emit('job-1', 'status_changed', { to: 'running' });
  await log.close('job-1');
  t.equal((await readFile(path, 'utf8')).split('\n').length, 4, 'three whole lines');
  t.same((await storedEvents(log, 'job-1')).map((e) => [e.seq, e.type]), [[1, 'output'], [2, 'output'], [3, 'status_changed']], 'the event after the restart is read back');
});
