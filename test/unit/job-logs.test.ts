import t from 'tap';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LOG_CHUNK_BYTES, readLogs, type LogJobs, type LogsParams } from '../../daemon/jobs/job-logs.js';
import type { EngineName, Job } from '../../daemon/model/job.js';
import { RunFolder } from '../../daemon/model/run-folder.js';
import type { JobStatus } from '../../daemon/model/states.js';

const runs = await mkdtemp(join(tmpdir(), 'skilld-logs-'));
t.teardown(() => rm(runs, { recursive: true, force: true }));

/** One job whose status and attempt a test sets; its logs live in a real run folder. */
function jobs(engine: EngineName, state: { status: JobStatus; attempt: number }): LogJobs & { log(attempt: number, stream: 'stdout' | 'stderr'): string } {
  const folder = new RunFolder(runs, `job-${engine}-${Math.random().toString(16).slice(2)}`);
  return {
    get: async () => ({ job_id: 'j', engine, ...state }) as unknown as Job,
    runFolder: () => folder,
    log: (attempt, stream) => folder.logFile(attempt, stream),
  };
}

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

const codexMessage = (text: string): string => `${JSON.stringify({ type: 'item.completed', item: { id: 'i', type: 'agent_message', text } })}\n`;
const NOISE = `${JSON.stringify({ type: 'turn.started' })}\n`;

t.test('format text: the agent messages of whole lines; next_offset stays at a line start', async (t) => {
  const state = { status: 'running' as JobStatus, attempt: 1 };
  const job = jobs('codex', state);
  const path = job.log(1, 'stdout');
  const first = NOISE + codexMessage('Looking.');
  const partial = codexMessage('Found it.').slice(0, 20);
  await write(path, first + partial);
  const params: LogsParams = { job_id: 'j', format: 'text' };
  const one = await readLogs(job, params);
  t.same(one, { attempt: 1, data: 'Looking.\n', next_offset: Buffer.byteLength(first), eof: false }, 'the line still being written waits');
  const waiting = await readLogs(job, { ...params, offset: one.next_offset });
  t.same(waiting, { attempt: 1, data: '', next_offset: one.next_offset, eof: false });
  await appendFile(path, codexMessage('Found it.').slice(20, -1));
  state.status = 'succeeded';
  const last = await readLogs(job, { ...params, offset: one.next_offset });
  t.same(last, { attempt: 1, data: 'Found it.\n', next_offset: Buffer.byteLength(first) + codexMessage('Found it.').length - 1, eof: true }, 'the last line of an ended attempt counts without its line break');
  t.same(await readLogs(job, params), { ...last, data: 'Looking.\nFound it.\n' }, 'an ended attempt: read whole in one call, eof');
  const raw = await readLogs(job, { job_id: 'j' });
  t.equal(raw.data, first + codexMessage('Found it.').slice(0, -1), 'raw: the bytes as they are');
  t.equal((await readLogs(job, { ...params, format: 'raw' })).data, raw.data, 'format raw is the default');
});

t.test('format text skips a line longer than a chunk, once, with a note', async (t) => {
  const job = jobs('codex', { status: 'succeeded', attempt: 1 });
  const long = codexMessage('x'.repeat(LOG_CHUNK_BYTES + 10));
  const text = long + codexMessage('after');
  await write(job.log(1, 'stdout'), text);
  const skipped = await readLogs(job, { job_id: 'j', format: 'text' });
  t.same(skipped, { attempt: 1, data: `[skilld: a line of more than ${LOG_CHUNK_BYTES} bytes is not read as text]\n`, next_offset: long.length, eof: false });
  t.same(await readLogs(job, { job_id: 'j', format: 'text', offset: skipped.next_offset }), { attempt: 1, data: 'after\n', next_offset: text.length, eof: true });
  const unended = jobs('codex', { status: 'running', attempt: 1 });
  await write(unended.log(1, 'stdout'), long.slice(0, LOG_CHUNK_BYTES + 5));
  t.same(await readLogs(unended, { job_id: 'j', format: 'text' }), { attempt: 1, data: '', next_offset: 0, eof: false }, 'a long line still being written: asked again later');
});

t.test('format text reads iFlow plain text and ACP pieces as the engine prints them', async (t) => {
  const iflow = jobs('iflow', { status: 'succeeded', attempt: 1 });
  await write(iflow.log(1, 'stdout'), 'Done.\n```json\n{"a": 1}\n```\n<Execution Info>\n{\n  "session-id": "s"\n}\n</Execution Info>\n');
  t.equal((await readLogs(iflow, { job_id: 'j', format: 'text' })).data, 'Done.\n```json\n{"a": 1}\n```\n');
  const gemini = jobs('gemini', { status: 'waiting_user', attempt: 1 });
  const chunk = (text: string): string => `${JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } })}\n`;
  await write(gemini.log(1, 'stdout'), chunk('Which ') + chunk('city?') + `${JSON.stringify({ jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } })}\n`);
  t.match(await readLogs(gemini, { job_id: 'j', format: 'text' }), { data: 'Which city?\n', eof: true });
});

t.test('format text is for stdout; stderr is read raw; attempts are checked', async (t) => {
  const job = jobs('claude', { status: 'failed', attempt: 2 });
  await write(job.log(1, 'stderr'), 'fatal\n');
  await t.rejects(readLogs(job, { job_id: 'j', stream: 'stderr', format: 'text' }), { code: 'INVALID_PARAMS', message: /stdout/ });
  t.same(await readLogs(job, { job_id: 'j', stream: 'stderr', attempt: 1 }), { attempt: 1, data: 'fatal\n', next_offset: 6, eof: true });
  t.same(await readLogs(job, { job_id: 'j', format: 'text' }), { attempt: 2, data: '', next_offset: 0, eof: true }, 'an attempt without a log');
  await t.rejects(readLogs(job, { job_id: 'j', attempt: 3 }), { code: 'INVALID_PARAMS' });
});
