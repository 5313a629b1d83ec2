import { cursorAfter, type JobEventRecord, type JobEvents } from '../../daemon/model/events.js';

/** Every stored event of a job after `afterSeq`, read a page of `pageBytes` at a time as a follower reads them. */
export async function storedEvents(events: JobEvents, jobId: string, afterSeq = 0, pageBytes = 1024): Promise<JobEventRecord[]> {
  const all: JobEventRecord[] = [];
  let cursor = cursorAfter(afterSeq);
  for (let end = false; !end; ) {
    const page = await events.read(jobId, cursor, pageBytes);
    all.push(...page.events);
    ({ cursor, end } = page);
  }
  return all;
}
