// The measuring client of P15. It starts as root and first connects to the daemons as root (an
// administrator, whom no rule checks), then becomes nobody (a user who is no administrator) and
// connects again: the daemon reads a connection's credentials as they were when it connected, so
// one process holds both kinds of connection to the same daemon. It imports nothing of the
// project.
//   node p15-client-main.mjs '<plan JSON>'
// As nobody it creates its jobs on the three daemons (so that it owns them), then reads them back
// request by request, in turn over each connection, and prints one JSON line: every latency, in
// ms, and what it saw of the access rules (so the benchmark can tell a daemon that did not apply
// them). A line `measuring` before it says when the recorded rounds begin.
import { createConnection, type Socket } from 'node:net';
import { userInfo } from 'node:os';

/** nobody: a user every Linux host has. */
const NOBODY = 65534;

/** What the benchmark asks for (see p15-access.ts). */
export interface ClientPlan {
  sockets: { shared: string; owner: string; mixed: string };
  /** Jobs to create on the shared and the owner daemon, and on the mixed one (where root has many more). */
  jobs: number;
  mixedJobs: number;
  warm: number;
  rounds: number;
  limit: number;
  /** A job of root's on the mixed daemon: nobody may not see it. */
  foreignJob: string;
}

/** The latencies of one daemon, by request. */
export type Latencies = Record<string, number[]>;

/**
 * Each connection's latencies: the owner-mode daemon as nobody (checked) and as root (not
 * checked: the same jobs, the same answers), the shared-mode daemon as nobody and as root, and
 * the mixed daemon as nobody.
 */
export interface ClientReport {
  user: string;
  fillMs: { shared: number; owner: number; mixed: number };
  samples: { owner: Latencies; ownerRoot: Latencies; shared: Latencies; sharedRoot: Latencies; mixed: Latencies };
  /** What the owner-mode daemons answered: the owner of a job, how many jobs a list showed, what a job of root's gave. */
  seen: { ownerUser: string | null; mixedListed: number; mixedForeignListed: number; deniedCode: string | null; cursors: number };
}

interface Job {
  job_id: string;
  status: string;
  owner?: { user: string } | null;
}

interface Page {
  jobs: Job[];
  next: string | null;
}

class CallError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

/** A minimal NDJSON JSON-RPC client: one request after another, as the benchmark times them. */
class Client {
  readonly #socket: Socket;
  readonly #waiters = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #nextId = 1;
  #buffered = '';

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      const lines = (this.#buffered + chunk).split('\n');
      this.#buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') this.#receive(line);
    });
    socket.on('close', () => {
      for (const waiter of this.#waiters.values()) waiter.reject(new Error('the daemon closed the connection'));
      this.#waiters.clear();
    });
  }

  static connect(path: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once('error', (error) => reject(new Error(`cannot connect to ${path}: ${error.message}`)));
      socket.once('connect', () => resolve(new Client(socket)));
    });
  }

  request<T>(method: string, params?: unknown): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#waiters.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  #receive(line: string): void {
    const message = JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string; data?: { code?: string } } };
    const waiter = message.id === undefined ? undefined : this.#waiters.get(message.id);
    if (waiter === undefined || message.id === undefined) return;
    this.#waiters.delete(message.id);
    if (message.error !== undefined) waiter.reject(new CallError(message.error.message, message.error.data?.code ?? 'UNKNOWN'));
    else waiter.resolve(message.result);
  }

  close(): void {
    this.#socket.end();
  }
}

const JOB = { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } };
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
const IN_FLIGHT = 8;

async function waitStatus(client: Client, jobId: string, done: (status: string) => boolean): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const job = await client.request<Job>('jobs/get', { job_id: jobId });
    if (done(job.status)) return;
    if (Date.now() > until) throw new Error(`job ${jobId} stayed ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * `count` finished jobs of this user, made fast: a job that hangs holds the daemon's one slot, so
 * each created job stays queued (no engine starts) and is canceled at once; then the holder is
 * canceled too. Returns their ids, oldest first.
 */
async function fill(client: Client, count: number): Promise<{ ids: string[]; ms: number }> {
  const t0 = performance.now();
  const holder = await client.request<Job>('jobs/create', { ...JOB, input: { scenario: 'hang' } });
  await waitStatus(client, holder.job_id, (status) => status === 'running');
  const ids: string[] = new Array<string>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const index = next++;
        const job = await client.request<Job>('jobs/create', JOB);
        await client.request('jobs/cancel', { job_id: job.job_id });
        ids[index] = job.job_id;
      }
    }),
  );
  await client.request('jobs/cancel', { job_id: holder.job_id });
  await waitStatus(client, holder.job_id, (status) => TERMINAL.has(status));
  return { ids, ms: performance.now() - t0 };
}

/** Every job the caller sees, and the `before` cursors whose page is full: paging through them once (untimed). */
async function pageThrough(client: Client, limit: number): Promise<{ ids: string[]; cursors: string[] }> {
  const cursors: string[] = [];
  let page = await client.request<Page>('jobs/list', { limit });
  const ids = page.jobs.map((job) => job.job_id);
  while (page.next !== null) {
    const cursor = page.next;
    page = await client.request<Page>('jobs/list', { limit, before: cursor });
    ids.push(...page.jobs.map((job) => job.job_id));
    if (page.jobs.length === limit) cursors.push(cursor);
  }
  return { ids, cursors };
}

async function timed(into: number[] | null, call: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await call();
  if (into !== null) into.push(performance.now() - t0);
}

/** One connection the rounds go through: to which daemon, as whom, and what it can ask for. */
interface Connection {
  name: keyof ClientReport['samples'];
  client: Client;
  ids: string[];
  cursors: string[];
  samples: Latencies;
}

/** Drops root for nobody, groups first (a process that is no longer root cannot drop them). */
function becomeNobody(): void {
  process.setgroups?.([]);
  process.setgid?.(NOBODY);
  process.setuid?.(NOBODY);
  if (process.getuid?.() !== NOBODY) throw new Error(`still uid ${String(process.getuid?.())} after setuid(${NOBODY})`);
}

async function main(): Promise<void> {
  const plan = JSON.parse(process.argv[2] ?? '') as ClientPlan;
  if (process.getuid?.() !== 0) throw new Error('the client must start as root: it connects as root first, then as nobody');
  const [ownerRoot, sharedRoot] = await Promise.all([Client.connect(plan.sockets.owner), Client.connect(plan.sockets.shared)]);
  becomeNobody();
  const [shared, owner, mixed] = await Promise.all([Client.connect(plan.sockets.shared), Client.connect(plan.sockets.owner), Client.connect(plan.sockets.mixed)]);
  const filled = await Promise.all([fill(shared, plan.jobs), fill(owner, plan.jobs), fill(mixed, plan.mixedJobs)]);

  // Each job is nobody's, so root is shown the same jobs on the same pages: the answers are alike and only the check differs.
  const connections: Connection[] = [];
  // The two daemons alternate in this order, and it only turns: every request follows one to the other daemon (one following
  // a request to its own daemon finds it awake, and was seen to take a third less).
  for (const [name, client] of [['owner', owner], ['shared', shared], ['ownerRoot', ownerRoot], ['sharedRoot', sharedRoot]] as const) {
    connections.push({ name, client, ...(await pageThrough(client, plan.limit)), samples: { get: [], list: [], listBefore: [] } });
  }
  const jobs = Math.min(...connections.map((c) => c.ids.length));
  const cursors = Math.min(...connections.map((c) => c.cursors.length));
  if (cursors === 0) throw new Error(`no full page after the first: ${jobs} jobs are too few for pages of ${plan.limit}`);
  const [asNobody, asRoot] = [connections[0] as Connection, connections[2] as Connection];
  if (asNobody.ids.join() !== asRoot.ids.join()) throw new Error('root and nobody were shown different jobs by the owner-mode daemon');
  // The first list of a user who is no administrator reads who may see each job from its stored line: every job, here.
  const mixedSamples: Latencies = { firstList: [], list: [], deniedGet: [] };
  await timed(mixedSamples['firstList'] as number[], () => mixed.request('jobs/list', { limit: plan.limit }));
  let deniedCode: string | null = null;
  const denied = async (): Promise<void> => {
    try {
      await mixed.request('jobs/get', { job_id: plan.foreignJob });
    } catch (error) {
      deniedCode = error instanceof CallError ? error.code : String(error);
    }
  };

  for (let round = 0; round < plan.warm + plan.rounds; round += 1) {
    const keep = round >= plan.warm;
    // The benchmark reads the daemons' CPU time from here to the end.
    if (round === plan.warm) process.stdout.write('measuring\n');
    const k = Math.floor(Math.random() * jobs);
    const c = Math.floor(Math.random() * cursors);
    // Request by request over each connection, who goes first moved on every round, so that drift of the machine touches all alike.
    const order = connections.map((_, i) => connections[(i + round) % connections.length] as Connection);
    for (const d of order) await timed(keep ? (d.samples['get'] as number[]) : null, () => d.client.request('jobs/get', { job_id: d.ids[k] }));
    for (const d of order) await timed(keep ? (d.samples['list'] as number[]) : null, () => d.client.request('jobs/list', { limit: plan.limit }));
    for (const d of order) await timed(keep ? (d.samples['listBefore'] as number[]) : null, () => d.client.request('jobs/list', { limit: plan.limit, before: d.cursors[c] }));
    await timed(keep ? (mixedSamples['list'] as number[]) : null, () => mixed.request('jobs/list', { limit: plan.limit }));
    await timed(keep ? (mixedSamples['deniedGet'] as number[]) : null, denied);
  }

  const ownJob = await owner.request<Job>('jobs/get', { job_id: asNobody.ids[0] });
  const mixedPage = await mixed.request<Page>('jobs/list', { limit: plan.limit });
  const me = userInfo().username;
  const samples = Object.fromEntries(connections.map((c) => [c.name, c.samples])) as Omit<ClientReport['samples'], 'mixed'>;
  const report: ClientReport = {
    user: me,
    fillMs: { shared: filled[0].ms, owner: filled[1].ms, mixed: filled[2].ms },
    samples: { ...samples, mixed: mixedSamples },
    seen: {
      ownerUser: ownJob.owner?.user ?? null,
      mixedListed: mixedPage.jobs.length,
      mixedForeignListed: mixedPage.jobs.filter((job) => job.owner?.user !== me).length,
      deniedCode,
      cursors,
    },
  };
  for (const client of [shared, owner, mixed, ownerRoot, sharedRoot]) client.close();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`p15 client: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
