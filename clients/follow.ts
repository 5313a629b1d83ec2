import { setTimeout as delay } from 'node:timers/promises';
import { DaemonUnreachableError, type RpcClient } from '../rpc/client.js';
import { flagOpt, intOpt } from './args.js';
import { arg, type Command, type Context } from './command.js';
import { eventLine, jsonLine } from './format.js';
import { escapedText, terminalText } from './terminal-text.js';
import type { JobView, LogChunk } from './wire.js';

/** How often `logs -f` asks again while the log has no new data. */
export const LOG_POLL_MS = 250;

/**
 * `logs <job>`: jobs/logs from offset 0: the agent's messages as text (`format: "text"`), or with
 * `--raw` (and always for `--stderr`) the engine's bytes as it printed them; with `-f` keep
 * polling until eof. Control characters are shown (escaped as JSON escapes them with `--raw`);
 * `--json` prints each answer as a JSON line.
 */
export const logsCommand: Command = {
  name: 'logs',
  usage: 'logs <job> [--attempt N] [--raw] [--stderr] [-f|--follow]',
  summary: "print what the agent said in an attempt, as text; --raw prints the engine's stdout as it came (its NDJSON), --stderr its stderr; -f follows until the attempt ends",
  options: { attempt: { type: 'string' }, raw: { type: 'boolean' }, stderr: { type: 'boolean' }, follow: { type: 'boolean', short: 'f' } },
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const jobId = arg(inv, 0);
    const follow = flagOpt(inv.values, 'follow');
    const stderr = flagOpt(inv.values, 'stderr');
    const raw = flagOpt(inv.values, 'raw');
    const text = !stderr && !raw;
    // Without --attempt the daemon reads the current attempt; pin it so offsets stay in one file.
    const attempt = intOpt(inv.values, 'attempt') ?? (follow ? await currentAttempt(ctx.client, jobId) : undefined);
    const params = { job_id: jobId, stream: stderr ? 'stderr' : 'stdout', ...(text ? { format: 'text' } : {}), ...(attempt === undefined ? {} : { attempt }) };
    const print = logPrinter(ctx, raw, text);
    let offset = 0;
    for (;;) {
      const chunk = await logsAt(ctx, { ...params, offset }, follow);
      const done = chunk.eof || (chunk.next_offset === offset && !follow);
      print(chunk, done);
      if (done) return 0;
      if (chunk.next_offset === offset) await delay(LOG_POLL_MS);
      offset = chunk.next_offset;
    }
  },
};

/**
 * Prints each chunk of a log: with `--json` the answer as a JSON line; else its data with every
 * control character shown (`--raw`: escaped as JSON escapes them). `text` ends on a line break.
 */
export function logPrinter(ctx: Context, raw: boolean, text: boolean): (chunk: LogChunk, done: boolean) => void {
  if (ctx.json) {
    return (chunk, done) => {
      if (chunk.data !== '' || done) ctx.print(jsonLine(chunk));
    };
  }
  const show = raw ? escapedText : terminalText;
  // A carriage return that ends a chunk is held back: the line feed that makes it a line break may open the next one.
  let held = '';
  let last = '\n';
  return (chunk, done) => {
    const data = held + chunk.data;
    held = !done && data.endsWith('\r') ? '\r' : '';
    const now = data.slice(0, data.length - held.length);
    if (now !== '') {
      ctx.write(show(now));
      last = now;
    }
    // Text ends on a line break of its own: a message streamed in pieces may not.
    if (done && text && !last.endsWith('\n')) ctx.write('\n');
  };
}

/** One jobs/logs answer; while following, through a restart of the daemon (the offset is the place to go on from). */
async function logsAt(ctx: Context, params: Record<string, unknown>, follow: boolean): Promise<LogChunk> {
  for (;;) {
    try {
      return await ctx.client.request<LogChunk>('jobs/logs', params);
    } catch (error) {
      if (!follow || !(error instanceof DaemonUnreachableError)) throw error;
      if (!(await (await import('./events.js')).comeBack(ctx))) throw error;
    }
  }
}

async function currentAttempt(client: RpcClient, jobId: string): Promise<number> {
  const job = await client.request<JobView & { attempt: number }>('jobs/get', { job_id: jobId });
  return Math.max(job.attempt, 1);
}

/** `watch [<job>]`: job/event lines; with a job, its past events first and exit at `finished`. */
export const watchCommand: Command = {
  name: 'watch',
  usage: 'watch [<job>]',
  summary: "print job events as they happen (a job's past events first; exits when it finishes)",
  options: {},
  positionals: [0, 1],
  run: async (ctx, inv) => {
    const jobId = inv.positionals[0];
    const params = jobId === undefined ? {} : { job_id: jobId, after_seq: 0 };
    const { lastingJobEvents } = await import('./events.js');
    for await (const event of lastingJobEvents(ctx, params)) {
      ctx.print(ctx.json ? jsonLine(event) : eventLine(event));
      if (jobId !== undefined && event.type === 'finished') return 0;
    }
    throw new Error('the event stream ended early'); // it ends only by throwing
  },
};
