// The page server under a burst of calls (docs/web.md, Limits): it keeps at most
// MAX_CALLS_IN_FLIGHT calls out to the daemon over its one shared connection, lets
// MAX_CALLS_WAITING more wait, and answers the rest 503 `BUSY` at once; the connection is never
// cut. Without the cap, a thousand `jobs/list` answers of 36 KB each pile up unread on the daemon's
// side past its 16 MiB backlog, the daemon closes the connection and most calls answer 503
// `DAEMON_UNREACHABLE`.
import t from 'tap';
import { connect } from 'node:net';
import { once } from 'node:events';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { exchange, signIn, startWeb, unixSocketsOf, type Exchange } from '../helpers/web.js';
import { MAX_CALLS_IN_FLIGHT, MAX_CALLS_WAITING } from '../../clients/web/bridge.js';
import { BUSY_RETRY_AFTER_SEC } from '../../clients/web/answers.js';

const BURST = 1000;

const daemon = await TestDaemon.start();
const client = await daemon.client();
const web = await startWeb(daemon.socket);
let paused = false;
t.teardown(async () => {
  if (paused) process.kill(daemon.child.pid as number, 'SIGCONT');
  await web.stop();
  await daemon.cleanup();
});

// Fifty finished jobs, so that each jobs/list answer is large (about 36 KB).
const made = await Promise.all(Array.from({ length: 50 }, () => client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} })));
for (const job of made) await waitForStatus(client, job.job_id);
const cookie = await signIn(web);
const list = (): Promise<Exchange> =>
  exchange(web.port, '/rpc', {
    method: 'POST',
    headers: { Host: `127.0.0.1:${web.port}`, Cookie: cookie, Origin: web.origin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ method: 'jobs/list', params: { limit: 1000 } }),
  });

/** What an answer was: `ok` (200 with every job), `busy` (503 BUSY with Retry-After), or what else it was. */
function kind(answer: Exchange): string {
  const body = JSON.parse(answer.body) as { result?: { jobs: unknown[] }; error?: { code: string } };
  if (answer.status === 200 && body.result?.jobs.length === made.length) return 'ok';
  if (answer.status === 503 && body.error?.code === 'BUSY' && answer.headers['retry-after'] === String(BUSY_RETRY_AFTER_SEC)) return 'busy';
  return `${answer.status} ${answer.body.slice(0, 200)}`;
}

function tally(kinds: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const k of kinds) counts[k] = (counts[k] ?? 0) + 1;
  return counts;
}

t.test(`${BURST} calls at once: each answered with its result or 503 BUSY, and the daemon connection is the same one after`, async (t) => {
  t.equal(kind(await list()), 'ok', 'a first call makes the shared connection');
  const pid = web.child.pid as number;
  const before = await unixSocketsOf(pid);
  const kinds = await Promise.all(Array.from({ length: BURST }, () => list().then(kind)));
  const counts = tally(kinds);
  t.same(Object.keys(counts).filter((k) => k !== 'ok' && k !== 'busy'), [], `every answer is ok or busy: ${JSON.stringify(counts)}`);
  t.ok((counts['ok'] ?? 0) >= MAX_CALLS_IN_FLIGHT, 'at least the first calls were answered');
  t.equal(kind(await list()), 'ok', 'a call after the burst is answered');
  t.same(await unixSocketsOf(pid), before, 'the page server holds the same daemon connection: never cut, never made again');
});

t.test('with the daemon paused: the calls out and those waiting are held, every other one refused BUSY at once, and all held are answered once it goes on', async (t) => {
  t.equal(kind(await list()), 'ok');
  const pid = web.child.pid as number;
  const before = await unixSocketsOf(pid);
  const held = MAX_CALLS_IN_FLIGHT + MAX_CALLS_WAITING;
  process.kill(daemon.child.pid as number, 'SIGSTOP');
  paused = true;
  // The refusals come while the daemon answers nothing: the calls beyond the held ones never wait for it.
  let refused = 0;
  let allRefused = (): void => undefined;
  const refusedAll = new Promise<void>((resolve) => (allRefused = resolve));
  let answered = 0;
  const calls = Array.from({ length: BURST }, () =>
    list().then((answer) => {
      const k = kind(answer);
      answered += 1;
      if (k === 'busy' && ++refused === BURST - held) allRefused();
      return k;
    }),
  );
  await refusedAll;
  t.equal(answered, BURST - held, `only the refusals were answered while the daemon was paused; ${held} calls are held`);
  // A download's first chunk is a call like any other.
  const download = await exchange(web.port, `/artifact?job_id=${made[0]?.job_id ?? ''}&path=report.txt`, { headers: { Host: `127.0.0.1:${web.port}`, Cookie: cookie } });
  t.equal(kind(download), 'busy', 'a download is refused BUSY too');
  process.kill(daemon.child.pid as number, 'SIGCONT');
  paused = false;
  t.same(tally(await Promise.all(calls)), { ok: held, busy: BURST - held });
  t.equal(kind(await list()), 'ok');
  t.same(await unixSocketsOf(pid), before, 'the same daemon connection throughout');
});

t.test('stopped while calls are out and waiting, the page server exits: no call opens a connection after its stop', async (t) => {
  const other = await startWeb(daemon.socket);
  t.teardown(() => other.stop());
  const otherCookie = await signIn(other);
  const call = (): Promise<Exchange | null> =>
    exchange(other.port, '/rpc', {
      method: 'POST',
      headers: { Host: `127.0.0.1:${other.port}`, Cookie: otherCookie, Origin: other.origin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ method: 'jobs/list', params: { limit: 1000 } }),
    }).catch(() => null); // cut when the page server stops
  t.match(await call(), { status: 200 });
  process.kill(daemon.child.pid as number, 'SIGSTOP');
  paused = true;
  const held = Array.from({ length: MAX_CALLS_IN_FLIGHT + MAX_CALLS_WAITING }, call);
  // One more is refused: every call before it is out or waiting.
  t.equal(kind((await call()) as Exchange), 'busy');
  const exited = once(other.child, 'exit');
  other.child.kill('SIGTERM');
  // The daemon wakes only once the page server has begun to stop (it no longer takes connections):
  // on a busy machine a daemon woken at once could answer held calls before the SIGTERM is handled.
  await untilRefused(other.port);
  process.kill(daemon.child.pid as number, 'SIGCONT');
  paused = false;
  t.same(await exited, [0, null], 'it exits, with 0');
  t.same(await Promise.all(held), held.map(() => null), 'the calls it held were cut as it stopped');
});

/** Resolves once nothing accepts connections on 127.0.0.1:`port` (a bounded number of tries). */
async function untilRefused(port: number): Promise<void> {
  for (let tries = 0; tries < 3000; tries += 1) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`127.0.0.1:${port} still takes connections`);
}
