import t, { type Test } from 'tap';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Histories } from '../../daemon/jobs/histories.js';
import { FolderDocs } from '../../daemon/store/folder-docs.js';
import { LowdbStore } from '../../daemon/store/lowdb-store.js';
import type { Interaction } from '../../daemon/model/interactions.js';

const round = (id: number, replied: string | null = null): Interaction => ({
  interaction_id: id,
  prompt: `question ${id}`,
  kind: 'open_text',
  response: replied === null ? null : { text: replied },
  resolution_mode: replied === null ? null : 'user_reply',
  asked_at: '2025-01-01T00:00:00.000Z',
  replied_at: replied === null ? null : '2025-01-01T00:01:00.000Z',
  idempotency_key: null,
});

/** The files store's documents, over the run folders in `runs`. */
async function docsIn(t: Test, runs: string): Promise<FolderDocs> {
  const store = await LowdbStore.open(runs, () => new Date());
  t.teardown(() => store.close());
  return new FolderDocs(store, runs);
}

t.test('the latest version is read from disk once, then from memory; writes are appended durably', async (t) => {
  const runs = await mkdtemp(join(tmpdir(), 'skilld-histories-'));
  t.teardown(() => rm(runs, { recursive: true, force: true }));
  await mkdir(join(runs, 'job-1'));
  const file = join(runs, 'job-1', 'history.ndjson');
  await writeFile(file, `${JSON.stringify([round(1)])}\n`);
  const histories = new Histories(await docsIn(t, runs));

  t.same(await histories.read('job-1'), [round(1)], 'the stored version');
  await writeFile(file, `${JSON.stringify([round(9)])}\n`);
  t.same(await histories.read('job-1'), [round(1)], 'served from memory: the daemon is the only writer');

  await histories.write('job-1', [round(1, 'yes')]);
  t.same(await histories.read('job-1'), [round(1, 'yes')]);
  const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
  t.same(JSON.parse(lines[lines.length - 1] as string), [round(1, 'yes')], 'appended as the last line');

  histories.forget('job-1');
  t.equal(histories.size, 0);
  t.same(await histories.read('job-1'), [round(1, 'yes')], 'after forget, read from disk again');

  // A job with no history yet: the file is created on the first write.
  t.same(await histories.read('job-2'), []);
  await mkdir(join(runs, 'job-2'));
  await histories.write('job-2', [round(1)]);
  t.same(JSON.parse(await readFile(join(runs, 'job-2', 'history.ndjson'), 'utf8')), [round(1)]);
});

t.test('a read that is not remembered, and a read overtaken by a write', async (t) => {
  const runs = await mkdtemp(join(tmpdir(), 'skilld-histories-'));
  t.teardown(() => rm(runs, { recursive: true, force: true }));
  await mkdir(join(runs, 'job-1'));
  await writeFile(join(runs, 'job-1', 'history.ndjson'), `${JSON.stringify([round(1)])}\n`);
  const histories = new Histories(await docsIn(t, runs));
  t.same(await histories.read('job-1', false), [round(1)]);
  t.equal(histories.size, 0, 'a finished job is read without being kept');

  // A read and a write at the same time: whichever ends first, the written version is the one kept.
  const [read] = await Promise.all([histories.read('job-1'), histories.write('job-1', [round(1, 'newer')])]);
  t.ok([JSON.stringify([round(1)]), JSON.stringify([round(1, 'newer')])].includes(JSON.stringify(read)), 'the read saw one version or the other');
  t.same(await histories.read('job-1'), [round(1, 'newer')], 'the older version never comes back');
});

t.test('a failed write leaves the remembered version unchanged', async (t) => {
  const runs = await mkdtemp(join(tmpdir(), 'skilld-histories-'));
  t.teardown(() => rm(runs, { recursive: true, force: true }));
  const histories = new Histories(await docsIn(t, runs));
  t.same(await histories.read('gone'), []);
  await t.rejects(histories.write('gone', [round(1)]), { code: 'ENOENT' }, 'no run folder');
  t.same(await histories.read('gone'), [], 'nothing that is not on disk is served');
});

t.test('a question asked again while its round is unanswered is that round: one question never becomes two', async (t) => {
  const runs = await mkdtemp(join(tmpdir(), 'skilld-histories-'));
  t.teardown(() => rm(runs, { recursive: true, force: true }));
  await mkdir(join(runs, 'job-1'));
  const histories = new Histories(await docsIn(t, runs));
  const asked = { interaction_id: 1, prompt: 'question 1', kind: 'open_text' };
  const first = await histories.ask('job-1', asked, '2025-01-01T00:00:00.000Z');
  t.equal(first.interaction_id, 1);
  // The turn's outcome stored again (a write retried after a storage fault, or settled again after a crash).
  const again = await histories.ask('job-1', asked, '2025-01-01T00:05:00.000Z');
  t.equal(again.interaction_id, 1, 'the same round');
  t.same((await histories.read('job-1')).map((one) => [one.interaction_id, one.asked_at]), [[1, '2025-01-01T00:00:00.000Z']], 'stored once, as first asked');
  const other = await histories.ask('job-1', { ...asked, prompt: 'another question' }, '2025-01-01T00:06:00.000Z');
  t.equal(other.interaction_id, 2, 'another question is a new round');
  await histories.write('job-1', (await histories.read('job-1')).map((one) => (one.interaction_id === 2 ? { ...one, response: { text: 'yes' }, replied_at: '2025-01-01T00:07:00.000Z', resolution_mode: 'user_reply' as const } : one)));
  t.equal((await histories.ask('job-1', { ...asked, prompt: 'another question', interaction_id: 2 }, '2025-01-01T00:08:00.000Z')).interaction_id, 3, 'the same words after a reply: a new round');
});
