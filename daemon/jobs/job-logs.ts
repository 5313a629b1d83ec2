import { open, stat, type FileHandle } from 'node:fs/promises';
import { SkilldError } from '../../rpc/errors.js';
import { agentTranscript } from '../engines/agent-text.js';
import { ENGINES } from '../engines/registry.js';
import type { Job } from '../model/job.js';
import type { LogStream, RunFolder } from '../model/run-folder.js';
import { isTerminal } from '../model/states.js';

/** The most bytes of the log one `jobs/logs` call reads. */
export const LOG_CHUNK_BYTES = 256 * 1024;

/** `raw`: the engine's bytes as it printed them; `text`: the agent's messages in them (stdout only). */
export type LogFormat = 'raw' | 'text';

export interface LogsParams {
  job_id: string;
  attempt?: number;
  stream?: LogStream;
  offset?: number;
  format?: LogFormat;
}

export interface LogChunk {
  attempt: number;
  data: string;
  /** The log's byte offset to read on from; for `text`, always at the start of a line. */
  next_offset: number;
  eof: boolean;
}

/** What reading a job's logs needs of the supervisor. */
export interface LogJobs {
  get(jobId: string): Promise<Job>;
  runFolder(jobId: string): RunFolder;
}

/**
 * A chunk of an attempt's log from a byte offset; `eof` once the attempt is over and all is read.
 * `format: "text"` reads whole lines of stdout only and gives the agent's messages in them, as
 * the engine's `agentText` reads each line.
 */
export async function readLogs(jobs: LogJobs, p: LogsParams): Promise<LogChunk> {
  const job = await jobs.get(p.job_id);
  const attempt = p.attempt ?? Math.max(job.attempt, 1);
  if (attempt > Math.max(job.attempt, 1)) throw new SkilldError('INVALID_PARAMS', `job has ${job.attempt} attempt(s)`);
  const text = p.format === 'text';
  if (text && p.stream === 'stderr') throw new SkilldError('INVALID_PARAMS', 'format "text" reads stdout, where the agent speaks; read stderr raw');
  const path = jobs.runFolder(p.job_id).logFile(attempt, p.stream ?? 'stdout');
  const offset = p.offset ?? 0;
  const size = (await stat(path).catch(() => null))?.size ?? 0;
  const finished = isTerminal(job.status) || attempt < job.attempt || (job.status !== 'running' && attempt === job.attempt);
  if (offset >= size) return { attempt, data: '', next_offset: offset, eof: finished };
  const file = await open(path, 'r');
  try {
    const bytes = await readAt(file, offset, Math.min(LOG_CHUNK_BYTES, size - offset));
    if (!text) {
      const whole = utf8Boundary(bytes);
      const next = offset + whole.length;
      return { attempt, data: whole.toString('utf8'), next_offset: next, eof: finished && next >= size };
    }
    const { lines, next } = await wholeLines(file, bytes, offset, size, finished);
    const data = lines === null ? `[skilld: a line of more than ${LOG_CHUNK_BYTES} bytes is not read as text]\n` : agentTranscript(lines, ENGINES[job.engine].agentText);
    return { attempt, data, next_offset: next, eof: finished && next >= size };
  } finally {
    await file.close();
  }
}

/** Up to `length` bytes of `file` from `position` (fewer at its end). */
export async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/**
 * The complete lines at the start of `bytes` (read at `offset`) and the offset after them. The
 * last line of an attempt that is over counts without its line break; a line still being written
 * waits for the next call; a line longer than a whole chunk is skipped to its end, unread.
 */
async function wholeLines(file: FileHandle, bytes: Buffer, offset: number, size: number, finished: boolean): Promise<{ lines: string[] | null; next: number }> {
  const toEnd = offset + bytes.length >= size;
  // An ended attempt's last line counts without its line break.
  if (finished && toEnd) return { lines: bytes.toString('utf8').replace(/\n$/, '').split('\n'), next: size };
  const end = bytes.lastIndexOf(0x0a) + 1;
  if (end > 0) return { lines: bytes.subarray(0, end - 1).toString('utf8').split('\n'), next: offset + end };
  if (toEnd) return { lines: [], next: offset };
  // Skipped (lines null) once its end is known; until then, asked again from the same offset.
  for (let at = offset + bytes.length; at < size; ) {
    const block = await readAt(file, at, Math.min(LOG_CHUNK_BYTES, size - at));
    const newline = block.indexOf(0x0a);
    if (newline !== -1) return { lines: null, next: at + newline + 1 };
    if (block.length === 0) break;
    at += block.length;
  }
  return finished ? { lines: null, next: size } : { lines: [], next: offset };
}

/** Drops a trailing partial UTF-8 character so a chunk never splits one. */
function utf8Boundary(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) !== 0x80) {
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return need > back ? bytes.subarray(0, bytes.length - back) : bytes;
    }
  }
  return bytes;
}
