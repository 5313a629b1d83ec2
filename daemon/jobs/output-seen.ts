import type { OutputStream } from '../process/spawn.js';
import { cursorAfter, type JobEvents } from './events.js';

/** How much of a job's event log one read takes while counting. */
const PAGE_BYTES = 1024 * 1024;

/**
 * How many lines of each stream of the job's current engine process the job's stored events
 * hold: the `output` events since its last turn started from the queue, which is where every
 * engine process starts (a live process's later turns continue from waiting). Each line an
 * engine prints is one `output` event, in order, so these are the lines a daemon that takes the
 * process up again has told already (docs/restarts.md).
 */
export async function outputSeen(events: JobEvents, jobId: string): Promise<Record<OutputStream, number>> {
  let seen = { stdout: 0, stderr: 0 };
  let cursor = cursorAfter(0);
  for (let end = false; !end; ) {
    const page = await events.read(jobId, cursor, PAGE_BYTES);
    for (const event of page.events) {
      const data = event.data as { from?: unknown; to?: unknown; stream?: unknown };
      if (event.type === 'status_changed' && data.from === 'queued' && data.to === 'running') seen = { stdout: 0, stderr: 0 };
      else if (event.type === 'output' && (data.stream === 'stdout' || data.stream === 'stderr')) seen[data.stream] += 1;
    }
    ({ cursor, end } = page);
  }
  return seen;
}
