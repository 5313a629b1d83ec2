import { EXIT } from './exit-codes.js';
import { colourOn, paintStatus } from './colour.js';
import type { Context } from './command.js';
import { lastingJobEvents, standingEvent, statusTo, type SubscribeParams } from './events.js';
import { reportResult } from './report-result.js';
import { StatusLine } from './status-line.js';
import type { JobEvent, JobView, PendingQuestion, PendingView, ResultView } from './wire.js';

/** Exit code after Ctrl-C (128 + SIGINT), as shells report an interrupted program. */

/** A waiting job's question, as `jobs/pending` gives it. */
export type WaitingView = PendingView & { pending: PendingQuestion };

export interface FollowOptions {
  /** `start`: every event from the job's first (a job this command created); `now`: where the job stands, then what happens next. */
  from: 'start' | 'now';
  /** A note on stderr at each status change (`job <id> <status>`). */
  notes: boolean;
  /** The job waits for a reply to this question: an exit code ends the following, undefined follows on. `out` prints past the status line. */
  onWaiting(out: Context, view: WaitingView): Promise<number | undefined>;
  /** When the job was created (ISO), for the elapsed time; with `now`, the job's own start is read. */
  since?: string | undefined;
}

/**
 * Follows a job to its end and prints its result (as `run --wait` does), or until `onWaiting`
 * ends it. On a terminal (stdout a TTY, not `--json`) a status line shows the status, the time
 * since the job started and the agent's latest message. Ctrl-C stops following and leaves the
 * job alone, with a note on how to come back (exit 130); a second Ctrl-C exits at once.
 */
export async function followJob(ctx: Context, jobId: string, options: FollowOptions): Promise<number> {
  const line = !ctx.json && process.stdout.isTTY === true ? new StatusLine(process.stdout, { since: timeOf(options.since), colour: colourOn(process.stdout) }) : null;
  const out = line === null ? ctx : pastLine(ctx, line);
  const colour = colourOn(process.stderr);
  const interrupt = new AbortController();
  const undo = onCtrlC(() => interrupt.abort());
  const params: SubscribeParams = options.from === 'start' ? { job_id: jobId, after_seq: 0 } : { job_id: jobId };
  const afterSubscribe = options.from === 'now' ? () => whereItStands(ctx, jobId, line) : undefined;
  let status: string | undefined;
  try {
    for await (const event of lastingJobEvents(ctx, params, { signal: interrupt.signal, afterSubscribe })) {
      if (event.type === 'finished') {
        line?.stop();
        return reportResult(out, await ctx.client.request<ResultView>('jobs/result', { job_id: jobId }));
      }
      if (event.type === 'message') {
        const text = (event.data as { text?: unknown } | null)?.text;
        if (typeof text === 'string') line?.update({ message: text });
        continue;
      }
      const to = statusTo(event);
      // A status seen already (a live event that repeats where the job stood): nothing new.
      if (to === undefined || to === status) continue;
      status = to;
      if (options.notes) out.warn(`job ${jobId} ${paintStatus(to, to, colour)}`);
      line?.update({ status: to });
      if (to !== 'waiting_user') continue;
      const view = await ctx.client.request<PendingView>('jobs/pending', { job_id: jobId });
      if (view.pending === null) continue; // answered meanwhile: follow on
      const waiting = view as WaitingView;
      const code = line === null ? await options.onWaiting(out, waiting) : await line.hold(() => options.onWaiting(out, waiting));
      if (code !== undefined) return code;
    }
    if (!interrupt.signal.aborted) throw new Error('the event stream ended early'); // jobEvents ends only by throwing, or when interrupted
    line?.stop();
    const still = status ?? 'running';
    ctx.warn(`skillctl: job ${jobId} is still ${paintStatus(still, still, colour)}; come back with: skillctl attach ${jobId}`);
    ctx.warn(`skillctl: (to stop it: skillctl cancel ${jobId})`);
    return EXIT.interrupted;
  } finally {
    undo();
    line?.stop();
  }
}

/** The job as it stands, as the first event to follow: `finished` for a job that has ended, else its status. */
async function whereItStands(ctx: Context, jobId: string, line: StatusLine | null): Promise<JobEvent[]> {
  const job = await ctx.client.request<JobView>('jobs/get', { job_id: jobId });
  const started = typeof job['started_at'] === 'string' ? job['started_at'] : job.created_at;
  line?.update({ since: timeOf(started) });
  return [standingEvent(job)];
}

function timeOf(iso: string | undefined): number {
  const time = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isNaN(time) ? Date.now() : time;
}

/** The context with the status line cleared before each print and drawn again after it. */
function pastLine(ctx: Context, line: StatusLine): Context {
  const around = <T>(print: (text: T) => void) => (text: T): void => {
    line.clear();
    print(text);
    line.draw();
  };
  return { client: ctx.client, json: ctx.json, print: around(ctx.print), write: around(ctx.write), warn: around(ctx.warn), reconnect: (signal) => ctx.reconnect(signal) };
}

/** The first Ctrl-C (SIGINT) calls `onFirst`; a second one exits at once. Returns the undo. */
function onCtrlC(onFirst: () => void): () => void {
  const second = (): void => process.exit(EXIT.interrupted);
  const first = (): void => {
    process.off('SIGINT', first);
    process.on('SIGINT', second);
    onFirst();
  };
  process.on('SIGINT', first);
  return () => {
    process.off('SIGINT', first);
    process.off('SIGINT', second);
  };
}
