import { seenBy, type VisibleTo } from '../model/access.js';
import type { Job } from '../model/job.js';
import { JOB_STATUSES, type JobStatus } from '../model/states.js';
import { decodeFinishedLine, type FinishedRecord } from './finished-log.js';
import type { JobQuery } from './store.js';

/** What the index keeps of one job: the fields it filters and orders by, and the job or its stored line. */
interface Entry {
  job_id: string;
  status: JobStatus;
  skill_id: string;
  created_at: string;
  /** An active job, as stored. */
  job: Job | null;
  /** A finished job's line, parsed when it is read. */
  line: string | null;
  /** Who may see it besides administrators (its owner's name, its share entries), read once when a list first asks. */
  access?: { owner: { user: string } | null; share_with: readonly string[] };
}

/** The first place in sorted `ids` whose id is not below `key`. */
function lowerBound(ids: readonly string[], key: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ids[mid] as string) < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

function byCreation(a: Entry, b: Entry): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  if (a.job_id === b.job_id) return 0;
  return a.job_id < b.job_id ? -1 : 1;
}

/** In-memory view of every job: lookup by id, creation order for paging, counts per status. */
export class JobIndex {
  readonly #byId = new Map<string, Entry>();
  /**
   * Every id in creation order, with its creation time beside it (`#created`), so that a job's
   * place is found by binary search. Removed ids stay until they are a quarter of the list
   * (`#removed`), then both lists are rebuilt: a removal costs the same with 50k jobs or 500k.
   */
  #order: string[] = [];
  #created: string[] = [];
  /**
   * Every id in code-unit order, for prefix lookups. Appended until the first lookup sorts them
   * (a start that looks none up sorts none); after that a new id is put in its place (ids are
   * random at their start).
   */
  #ids: string[] = [];
  #idsSorted = false;
  /** Ids removed but still in the ordered lists. */
  readonly #removed = new Set<string>();
  readonly #counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;

  has(jobId: string): boolean {
    return this.#byId.has(jobId);
  }

  /** The job; a finished one is parsed from its line, so every call returns a fresh object for it. */
  get(jobId: string): Job | undefined {
    const entry = this.#byId.get(jobId);
    return entry === undefined ? undefined : read(entry);
  }

  /** An active job (kept as an object). */
  put(job: Job): void {
    this.#set({ job_id: job.job_id, status: job.status, skill_id: job.skill_id, created_at: job.created_at, job, line: null });
  }

  /** A finished job (kept as its stored line). */
  putFinished(record: FinishedRecord): void {
    this.#set({ job_id: record.job_id, status: record.status, skill_id: record.skill_id, created_at: record.created_at, job: null, line: record.line });
  }

  #set(entry: Entry): void {
    const previous = this.#byId.get(entry.job_id);
    if (previous === undefined) {
      // An id that comes back before the lists dropped it would stand in them twice.
      if (this.#removed.has(entry.job_id)) this.#compact();
      this.#order.push(entry.job_id);
      this.#created.push(entry.created_at);
      if (this.#idsSorted) this.#ids.splice(lowerBound(this.#ids, entry.job_id), 0, entry.job_id);
      else this.#ids.push(entry.job_id);
    } else {
      this.#counts[previous.status] -= 1;
    }
    this.#counts[entry.status] += 1;
    this.#byId.set(entry.job_id, entry);
  }

  /** Forgets jobs (retention). Their ids leave the ordered lists once enough are gone. */
  remove(jobIds: Iterable<string>): void {
    for (const id of jobIds) {
      const entry = this.#byId.get(id);
      if (entry === undefined) continue;
      this.#byId.delete(id);
      this.#counts[entry.status] -= 1;
      this.#removed.add(id);
    }
    if (this.#removed.size * 4 > this.#order.length) this.#compact();
  }

  #compact(): void {
    const keep = this.#order.map((id) => this.#byId.has(id));
    this.#order = this.#order.filter((_, i) => keep[i]);
    this.#created = this.#created.filter((_, i) => keep[i]);
    this.#ids = this.#ids.filter((id) => this.#byId.has(id));
    this.#removed.clear();
  }

  /** Restores creation order after a bulk load from two sources. */
  sort(): void {
    const entries = [...this.#byId.values()].sort(byCreation);
    this.#order = entries.map((entry) => entry.job_id);
    this.#created = entries.map((entry) => entry.created_at);
    if (this.#removed.size > 0) this.#ids = this.#ids.filter((id) => this.#byId.has(id));
    this.#removed.clear();
  }

  #sortIds(): void {
    if (this.#idsSorted) return;
    this.#ids.sort();
    this.#idsSorted = true;
  }

  /**
   * Where a job is in `#order`: a binary search by creation time, then the ids created in the same
   * millisecond; a job out of place (the clock went back) is looked for in the whole list.
   */
  #positionOf(jobId: string): number {
    const entry = this.#byId.get(jobId);
    if (entry === undefined) return -1;
    for (let i = lowerBound(this.#created, entry.created_at); i < this.#order.length && this.#created[i] === entry.created_at; i += 1) {
      if (this.#order[i] === jobId) return i;
    }
    return this.#order.indexOf(jobId);
  }

  counts(): Record<JobStatus, number> {
    return { ...this.#counts };
  }

  /**
   * Newest first, filtered, one page; `next` is the cursor for the following page. Only the page
   * is parsed. With `id_prefix`, only the ids in that prefix's range of the sorted ids are visited.
   */
  list(query: JobQuery): { jobs: Job[]; next: string | null } {
    const cursor = query.before === undefined ? -1 : this.#positionOf(query.before);
    const start = cursor === -1 ? this.#order.length : cursor;
    const positions = query.id_prefix === undefined ? null : this.#positionsWithPrefix(query.id_prefix, start);
    const count = positions === null ? start : positions.length;
    const page: Entry[] = [];
    for (let k = count - 1; k >= 0; k -= 1) {
      const i = positions === null ? k : (positions[k] as number);
      const entry = this.#byId.get(this.#order[i] as string);
      if (entry === undefined) continue;
      if (query.status !== undefined && entry.status !== query.status) continue;
      if (query.skill_id !== undefined && entry.skill_id !== query.skill_id) continue;
      if (query.visible_to !== undefined && !visible(entry, query.visible_to)) continue;
      if (page.length === query.limit) return { jobs: page.map(read), next: page[page.length - 1]?.job_id ?? null };
      page.push(entry);
    }
    return { jobs: page.map(read), next: null };
  }

  /** The creation positions (below `end`) of the ids that start with `prefix`, ascending: a binary search, then the matches alone. */
  #positionsWithPrefix(prefix: string, end: number): number[] {
    this.#sortIds();
    const ids = this.#ids;
    const positions: number[] = [];
    for (let i = lowerBound(ids, prefix); i < ids.length && (ids[i] as string).startsWith(prefix); i += 1) {
      const position = this.#positionOf(ids[i] as string);
      if (position !== -1 && position < end) positions.push(position);
    }
    return positions.sort((a, b) => a - b);
  }
}

/** Whether the entry's job is seen in view `to` (model/access.ts); who may see it is read from the job once. */
function visible(entry: Entry, to: VisibleTo): boolean {
  if (entry.access === undefined) {
    const job = read(entry);
    entry.access = { owner: job.owner ?? null, share_with: job.share_with ?? [] };
  }
  return seenBy(entry.access, to);
}

function read(entry: Entry): Job {
  return entry.job ?? decodeFinishedLine(entry.line as string, entry.job_id);
}
