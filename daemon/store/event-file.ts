import { open, type FileHandle } from 'node:fs/promises';
import type { EventCursor, EventPage, JobEventRecord } from '../model/events.js';

/** What one read of the file asks for; a longer line is read whole, in larger reads. */
const CHUNK_BYTES = 64 * 1024;
/** A stored line starts `{"job_id":"…","seq":N,` (event-log.ts writes them so): its seq is read without parsing the rest. */
const SEQ_PREFIX = /^\{"job_id":"[^"]*","seq":(\d+),/;
const LINE_START = Buffer.from('{"job_id":"');

/**
 * Reads the events of an `events.ndjson` file that come after `cursor`, in order, until they hold
 * `maxBytes` (at least one event when there is one) or the file ends. Only the page is held in
 * memory: the file is read from `cursor.at` in chunks. A line that does not parse (the torn end
 * of a write cut short by a crash) is passed over. A missing file has no events.
 */
export async function readEventPage(path: string, cursor: EventCursor, maxBytes: number): Promise<EventPage> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { events: [], cursor, end: true };
    throw error;
  }
  try {
    return await readPage(file, cursor, maxBytes);
  } finally {
    await file.close();
  }
}

async function readPage(file: FileHandle, cursor: EventCursor, maxBytes: number): Promise<EventPage> {
  const events: JobEventRecord[] = [];
  let seq = cursor.seq;
  let bytes = 0;
  // Where the next whole line starts, and the bytes read past it that do not end a line yet.
  let lineAt = await startOfLine(file, cursor.at);
  let pending = Buffer.alloc(0);
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, pending.length));
    const { bytesRead } = await file.read(chunk, 0, chunk.length, lineAt + pending.length);
    if (bytesRead === 0) return { events, cursor: { seq, at: lineAt }, end: true };
    const data = pending.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a, start)) {
      const line = data.subarray(start, nl);
      start = nl + 1;
      lineAt += line.length + 1;
      const event = eventAfter(line, seq);
      if (event === null) continue;
      events.push(event);
      seq = event.seq;
      bytes += line.length;
      if (bytes >= maxBytes) return { events, cursor: { seq, at: lineAt }, end: false };
    }
    pending = Buffer.from(data.subarray(start));
  }
}

/** `at` when a line starts there (the file's start, or just after a newline), else the file's start. */
async function startOfLine(file: FileHandle, at: number): Promise<number> {
  if (at <= 0) return 0;
  const before = Buffer.alloc(1);
  const { bytesRead } = await file.read(before, 0, 1, at - 1);
  return bytesRead === 1 && before[0] === 0x0a ? at : 0;
}

/**
 * The event a stored line holds when its seq is past `afterSeq`; null for one at or before it. A
 * line that does not parse is a torn write with a whole one appended to it (by a daemon before the
 * torn end was cut off): the whole one is read from its start, and the torn part is passed over.
 */
function eventAfter(line: Buffer, afterSeq: number): JobEventRecord | null {
  const prefix = SEQ_PREFIX.exec(line.subarray(0, 256).toString('latin1'));
  if (prefix !== null && Number(prefix[1]) <= afterSeq && line.indexOf(LINE_START, 1) === -1) return null;
  const event = parseEvent(line) ?? parseEvent(line.subarray(Math.max(line.lastIndexOf(LINE_START), 0)));
  return event !== null && event.seq > afterSeq ? event : null;
}

function parseEvent(bytes: Buffer): JobEventRecord | null {
  try {
    const event = JSON.parse(bytes.toString('utf8')) as JobEventRecord;
    return typeof event.seq === 'number' ? event : null;
  } catch {
    return null;
  }
}
