import t from 'tap';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIVE_FILES, LiveJournal, spoolLines } from '../../daemon/jobs/live-journal.js';

t.test('a live journal: appended in order, read back whole, a torn last line left out, cleared for a new session', async (t) => {
  const dir = t.testdir();
  const journal = new LiveJournal(dir);
  t.same(journal.read(), [], 'none yet');
  journal.append({ at: 0, call: 'turn', prompt: 'hello', hard_timeout_ms: 1000, logs: null });
  journal.append({ at: 3, call: 'send' });
  journal.append({ at: 5, call: 'answer', decision: 'allow' });
  appendFileSync(join(dir, LIVE_FILES.journal), '{"at":7,"call":"inter');
  t.same(journal.read().map((entry) => [entry.at, entry.call]), [[0, 'turn'], [3, 'send'], [5, 'answer']]);
  journal.clear();
  t.same(journal.read(), []);
  journal.clear(); // nothing to clear
});

t.test("a live session's stdout, split as the daemon splits it: complete lines only, an oversized one by its size", async (t) => {
  const dir = t.testdir();
  t.same(spoolLines(dir, 16), [], 'no output yet');
  writeFileSync(join(dir, LIVE_FILES.stdout), `{"a":1}\n${'x'.repeat(40)}\n{"b":2}\n{"partial`);
  const lines = spoolLines(dir, 16);
  t.match(lines, [{ text: '{"a":1}' }, { overflow: Number }, { text: '{"b":2}' }]);
  t.equal(lines.length, 3, 'the partial last line waits for its end');
});
