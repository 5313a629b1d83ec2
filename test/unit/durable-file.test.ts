import t from 'tap';
import { open, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SYNCED_APPEND, appendSynced, writeFileDurably, writeNewFileSynced } from '../../daemon/store/durable-file.js';

t.test('writeNewFileSynced creates a private file and never touches one that exists', async (t) => {
  const dir = t.testdir();
  const path = join(dir, 'request.json');
  await writeNewFileSynced(path, 'first ✓\n');
  t.equal(await readFile(path, 'utf8'), 'first ✓\n');
  t.equal((await stat(path)).mode & 0o777, 0o600);
  await t.rejects(writeNewFileSynced(path, 'second\n'), { code: 'EEXIST' });
  t.equal(await readFile(path, 'utf8'), 'first ✓\n', 'the old content stands');
});

t.test('writeFileDurably replaces a file and leaves no temporary file behind', async (t) => {
  const dir = t.testdir({ 'state.json': 'old\n' });
  await writeFileDurably(join(dir, 'state.json'), 'new\n');
  t.equal(await readFile(join(dir, 'state.json'), 'utf8'), 'new\n');
  t.same(await readdir(dir), ['state.json']);
});

t.test('appendSynced appends whole texts to a SYNCED_APPEND file', async (t) => {
  const path = join(t.testdir(), 'log.ndjson');
  for (const line of ['{"a":1}\n', '{"b":2}\n']) {
    const file = await open(path, SYNCED_APPEND, 0o600);
    await appendSynced(file, line);
    await file.close();
  }
  t.equal(await readFile(path, 'utf8'), '{"a":1}\n{"b":2}\n');
});
