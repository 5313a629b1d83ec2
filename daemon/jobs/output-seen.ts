import type { OutputStream } from '../process/spawn.js';
import { cursorAfter, type JobEventRecord, type JobEvents } from '../model/events.js';

/** How much of a job's event log one read takes while counting. */
const PAGE_BYTES = 1024 * 1024;

/**
 * Counts how many lines of each stream of the job's current engine process the job's stored
 * events hold: the `output` events since its last turn started from the queue, which is where
 * every engine process starts (a live process's later turns continue from waiting). Each line an
 * engine prints is one `output` event, in order, so these are the lines a daemon that takes the
 * process up again has told already (docs/restarts.md). Shown the events in order by `add`.
 */
export class OutputSeen {
  seen: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  /** The status the job's last stored `status_changed` moved it to; null before any. */
  lastStatus: string | null = null;

  add(event: JobEventRecord): void {
    const data = event.data as { from?: unknown; to?: unknown; stream?: unknown };
    if (event.type === 'status_changed' && typeof data.to === 'string') this.lastStatus = data.to;
    if (event.type === 'status_changed' && data.from === 'queued' && data.to === 'running') this.seen = { stdout: 0, stderr: 0 };
    else if (event.type === 'output' && (data.stream === 'stdout' || data.stream === 'stderr')) this.seen[data.stream] += 1;
  }
}

/**
 * Primes the job's event numbering (`JobEvents.prime`) and counts its told output (`OutputSeen`)
 * in the same pass where the store reads its log to prime; where it does not, and `count`, from a
 * read of its own. `lastStatus` is known only where the log was read (null otherwise).
 */
export async function primeCounting(events: JobEvents, jobId: string, count: boolean): Promise<{ seen: Record<OutputStream, number>; lastStatus: string | null }> {
  const counter = new OutputSeen();
  const visited = await events.prime(jobId, (event) => counter.add(event));
  if (!count || visited) return { seen: counter.seen, lastStatus: visited ? counter.lastStatus : null };
  let cursor = cursorAfter(0);
  for (let end = false; !end; ) {
    const page = await events.read(jobId, cursor, PAGE_BYTES);
    for (const event of page.events) counter.add(event);
    ({ cursor, end } = page);
  }
  return { seen: counter.seen, lastStatus: counter.lastStatus };
}
