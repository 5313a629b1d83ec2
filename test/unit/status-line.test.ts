import t from 'tap';
import { colourOn, paintStatus, visibleLength } from '../../clients/colour.js';
import { jobTable, table } from '../../clients/format.js';
import { CLEAR_LINE, StatusLine, oneLine, statusLineText } from '../../clients/status-line.js';
import type { JobView } from '../../clients/wire.js';

t.test('the elapsed time is a duration as the jobs table prints it; a clock a little behind shows no time yet', async (t) => {
  const view = { status: 'running', message: null };
  t.equal(statusLineText({ ...view, elapsedMs: -5 }, 80, false), 'running <1s');
  t.equal(statusLineText({ ...view, elapsedMs: 125_000 }, 80, false), 'running 2m05s');
});

t.test('the status line: status, elapsed, then the message on one line, cut to the width less one column', async (t) => {
  const view = { status: 'running', elapsedMs: 12_000, message: 'Reading the files.\nThen\tI write.' };
  t.equal(statusLineText(view, 80, false), 'running 12s  Reading the files. Then I write.');
  t.equal(statusLineText({ ...view, message: null }, 80, false), 'running 12s', 'no message yet');
  t.equal(statusLineText({ ...view, message: ' \n ' }, 80, false), 'running 12s', 'a blank message');
  const cut = statusLineText(view, 24, false);
  t.equal(cut, 'running 12s  Reading t…');
  t.equal([...cut].length, 23, 'never the last column: some terminals wrap there');
  t.equal(statusLineText({ ...view, message: '你好世界你好世界你好世界你好世界' }, 20, false), 'running 12s  你好世界你…', 'cut by characters, never inside one');
  t.equal(statusLineText(view, 1, false), '…', 'a terminal too narrow still gets one column');
});

t.test('the status line in colour: only the status is coloured, and the cut counts what shows', async (t) => {
  const line = statusLineText({ status: 'running', elapsedMs: 1000, message: 'x'.repeat(200) }, 40, true);
  t.match(line, /^\x1b\[36mrunning\x1b\[0m 1s {2}x+…$/);
  t.equal(visibleLength(line), 39);
  t.equal(statusLineText({ status: 'running', elapsedMs: 1000, message: null }, 5, true), 'run…', 'a cut status is not coloured');
});

t.test('control characters in a message cannot reach the terminal: they are shown, as every printer shows them', async (t) => {
  t.equal(oneLine('\x1b[2Jgone\x07 \x9b31m\r\nback'), '\\x1b[2Jgone\\x07 \\x9b31m back');
  t.equal(oneLine('ls\rrm -rf ~ \u202etxt.exe'), 'ls\\x0drm -rf ~ \\u202etxt.exe', 'a carriage return and a bidi override are shown too');
  t.equal(oneLine('one\n\ttwo\r\n three'), 'one two three', 'line breaks and tabs are spaces: the message stays on one line');
});

t.test('StatusLine draws in place, clears, holds and stops; nothing before a status is known', async (t) => {
  const written: string[] = [];
  let now = 10_000;
  const line = new StatusLine({ write: (text) => written.push(text), columns: 0 }, { since: 4_000, colour: false, now: () => now });
  t.teardown(() => line.stop());
  line.draw();
  line.update({ message: 'hello' });
  t.same(written, [], 'no status yet: nothing drawn');
  line.update({ status: 'running' });
  t.same(written, [`${CLEAR_LINE}running 6s  hello`], 'a terminal of unknown width counts as 80 columns');
  now = 75_000;
  line.draw();
  t.equal(written.at(-1), `${CLEAR_LINE}running 1m11s  hello`, 'the elapsed time moves on');
  line.update({ since: 74_000, status: 'waiting_user', message: 'Which city?' });
  t.equal(written.at(-1), `${CLEAR_LINE}waiting_user 1s  Which city?`);
  line.clear();
  t.equal(written.at(-1), CLEAR_LINE);
  const count = written.length;
  line.clear();
  t.equal(written.length, count, 'clearing a line that is not shown writes nothing');
  const answer = await line.hold(async () => {
    line.draw();
    line.update({ status: 'running' });
    return 'typed';
  });
  t.equal(answer, 'typed');
  t.same(written.slice(count), [`${CLEAR_LINE}running 1s  Which city?`], 'held: nothing drawn until the work is done, then drawn again');
  await t.rejects(line.hold(() => Promise.reject(new Error('interrupted'))), /interrupted/);
  t.equal(written.at(-1), `${CLEAR_LINE}running 1s  Which city?`, 'drawn again after a failed hold too');
  line.stop();
  t.equal(written.at(-1), CLEAR_LINE, 'stop clears the line');
  line.update({ status: 'succeeded' });
  t.equal(written.at(-1), CLEAR_LINE, 'nothing is drawn after stop');
});

t.test('colour: only on a TTY that allows it; unknown statuses stay plain', async (t) => {
  t.equal(colourOn({ isTTY: true, hasColors: () => true }), true);
  t.equal(colourOn({ isTTY: true, hasColors: () => false }), false, 'NO_COLOR, TERM=dumb');
  t.equal(colourOn({ isTTY: false, hasColors: () => true }), false, 'not a terminal, even with FORCE_COLOR');
  t.equal(colourOn({}), false, 'a pipe or a file');
  const colours = Object.fromEntries(['succeeded', 'failed', 'canceled', 'waiting_user', 'running', 'queued'].map((s) => [s, paintStatus(s, s, true)]));
  t.same(colours, {
    succeeded: '\x1b[32msucceeded\x1b[0m',
    failed: '\x1b[31mfailed\x1b[0m',
    canceled: '\x1b[33mcanceled\x1b[0m',
    waiting_user: '\x1b[33mwaiting_user\x1b[0m',
    running: '\x1b[36mrunning\x1b[0m',
    queued: '\x1b[34mqueued\x1b[0m',
  });
  t.equal(paintStatus('job failed', 'failed', false), 'job failed');
  t.equal(paintStatus('odd', 'odd', true), 'odd');
  t.equal(paintStatus('', 'failed', true), '');
});

t.test('tables align on what shows: colour codes take no room', async (t) => {
  const job = (id: string, status: string): JobView => ({ job_id: id, skill_id: 's', engine: 'codex', execution_mode: 'auto', status, created_at: '2026-01-01T00:00:00.000Z', error: null });
  const jobs = [job('job-1', 'succeeded'), job('job-2', 'failed')];
  const now = Date.parse('2026-01-01T00:05:00.000Z');
  const plain = jobTable(jobs, now, false);
  const coloured = jobTable(jobs, now, true);
  t.not(coloured, plain);
  t.equal(coloured.replace(/\x1b\[[0-9;]*m/g, ''), plain, 'the same table once the colour is taken away');
  t.match(coloured, /\x1b\[32msucceeded\x1b\[0m {2}5 min ago/);
  t.match(coloured, /\x1b\[31mfailed\x1b\[0m {5}5 min ago/);
  t.equal(table(['A', 'B'], [['\x1b[31mx\x1b[0m', 'y'], ['long', 'z']]), 'A     B\n\x1b[31mx\x1b[0m     y\nlong  z');
});
