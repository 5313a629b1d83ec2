// Replays of a chatty job's events stream from the store with flow control: they reach the end,
// the daemon's memory stays bounded, and a replay stops when its connection closes.
import t from 'tap';
import { createConnection } from 'node:net';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { memoryOf, resetPeak } from '../helpers/memory.js';

/** What the issue measured: a job whose engine printed 20 MB of agent messages, replayed by 8 clients at once. */
const CHATTY_BYTES = 20 * 1000 * 1000;
const REPLAYS = 8;
/**
 * What the daemon may grow by, at its peak: less than what the replays carry together, which a
 * daemon holding each replay whole needs at the least (it grew by ~800 MiB). Peak memory also
 * holds garbage not yet collected, which grows when the machine is busy (45-60 MiB here when
 * idle, 175 MiB once on a loaded one): the figure itself is benchmark P9's, measured quietly.
 */
const maxGrowthMiB = (replayBytes: number): number => (REPLAYS * replayBytes) / 2 ** 20;

const daemon = await TestDaemon.start();
t.teardown(() => daemon.cleanup());
const client = await daemon.client();
const pid = daemon.child.pid as number;

const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'chatty', chatty_bytes: CHATTY_BYTES } });
const ran = await waitForStatus(client, job.job_id);
/** The seq of the job's last event (its `finished`), found by the first replay; and the bytes of that replay. */
let last = 0;
let replayBytes = 0;

interface Replay {
  /** The seq of every event, in the order it came. */
  seqs: number[];
  bytes: number;
  finished: boolean;
  closed: boolean;
}

/**
 * One connection that subscribes with `after_seq` and reads every line as it comes, keeping only
 * each event's seq; resolves at the job's `finished` event, or when the daemon cuts it.
 */
function replay(afterSeq: number): Promise<Replay> {
  const socket = createConnection(daemon.socket);
  const seen: Replay = { seqs: [], bytes: 0, finished: false, closed: false };
  let rest = '';
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      seen.bytes += chunk.length;
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const message = JSON.parse(line) as { method?: string; params?: { seq: number; type: string } };
        if (message.method !== 'job/event' || message.params === undefined) continue;
        seen.seqs.push(message.params.seq);
        if (message.params.type === 'finished') {
          seen.finished = true;
          socket.destroy();
          resolve(seen);
        }
      }
    });
    socket.on('close', () => {
      seen.closed = true;
      resolve(seen);
    });
    socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'jobs/subscribe', params: { job_id: job.job_id, after_seq: afterSeq } })}\n`);
  });
}

t.test('one replay of the whole job reaches its end', async (t) => {
  t.equal(ran.status, 'succeeded', 'the chatty job ran');
  const whole = await replay(0);
  last = whole.seqs[whole.seqs.length - 1] ?? 0;
  replayBytes = whole.bytes;
  t.ok(whole.finished, `the replay reaches the finished event (${whole.seqs.length} events, ${(whole.bytes / 2 ** 20).toFixed(1)} MiB)`);
  t.same(whole.seqs, Array.from({ length: last }, (_, i) => i + 1), 'every event once, in order');
  t.ok(whole.bytes > CHATTY_BYTES, 'the job\'s events hold more than what the engine printed');
});

t.test(`${REPLAYS} concurrent replays of a job of ${CHATTY_BYTES / 1e6} MB each reach the end, and the daemon grows by less than they carry together`, async (t) => {
  const before = await memoryOf(pid);
  await resetPeak(pid);
  const replays = await Promise.all(Array.from({ length: REPLAYS }, () => replay(0)));
  const after = await memoryOf(pid);
  for (const [n, r] of replays.entries()) {
    t.ok(r.finished, `replay ${n + 1} reached the finished event`);
    t.same(r.seqs, Array.from({ length: last }, (_, i) => i + 1), `replay ${n + 1}: every event once, in order`);
  }
  const growthMiB = (after.peakRssKiB - before.rssKiB) / 1024;
  t.ok(growthMiB < maxGrowthMiB(replayBytes), `the daemon's peak grew by ${growthMiB.toFixed(1)} MiB, less than the ${maxGrowthMiB(replayBytes).toFixed(0)} MiB the replays carry`);
});

t.test('a replay from the middle starts after after_seq', async (t) => {
  const half = Math.floor(last / 2);
  const r = await replay(half);
  t.same(r.seqs, Array.from({ length: last - half }, (_, i) => half + i + 1));
});

t.test('200 replays on one connection that goes away stop with it; the daemon stays small and keeps answering', async (t) => {
  const before = await memoryOf(pid);
  await resetPeak(pid);
  const socket = createConnection(daemon.socket);
  const batch = Array.from({ length: 200 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'jobs/subscribe', params: { job_id: job.job_id, after_seq: 0 } }));
  let received = 0;
  let cut = false;
  await new Promise<void>((resolve) => {
    socket.on('close', () => {
      cut = received <= 4 * 2 ** 20;
      resolve();
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // The client reads a little of what it asked for, then leaves.
      if (received > 4 * 2 ** 20) {
        socket.destroy();
        resolve();
      }
    });
    socket.write(`${JSON.stringify(batch)}\n`);
  });
  t.notOk(cut, 'the daemon did not cut the connection');
  // The replays' reads end once the daemon sees the connection gone; another client is served in full meanwhile.
  const after = await replay(last - 3);
  t.same(after.seqs, [last - 2, last - 1, last], 'a later client gets its replay');
  t.match(await client.request('daemon/ping'), { ok: true });
  const status = await client.request<{ connections?: number }>('daemon/status');
  t.ok(status, 'status answers');
  const growthMiB = ((await memoryOf(pid)).peakRssKiB - before.rssKiB) / 1024;
  t.ok(growthMiB < maxGrowthMiB(replayBytes), `the daemon's peak grew by ${growthMiB.toFixed(1)} MiB`);
});
