// Webhook notifications through the real daemon (docs/notify.md): a receiver on 127.0.0.1 is told
// when a job waits, with the question and a valid signature, and when it ends; a receiver that
// answers 500 twice gets the delivery on the third try with the same delivery id, across a
// restart of the daemon in between; `skillctl notify log` shows the tries. The test waits for
// the receiver's hits and the daemon's log lines, never for time.
import t from 'tap';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { TestDaemon, waitForStatus } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';
import type { NotifyAttemptView } from '../../clients/notify-command.js';

const SECRET = 'it is a secret to everybody';
const env = { SKILLD_TEST_HOOK_SECRET: SECRET };

interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  answered: number;
  /** Which daemon sent it: 1 before the restart, 2 after. */
  daemon: number;
}

/** A receiver on 127.0.0.1 answering its hits with `statuses` in turn (then 204), keeping each. */
async function receiver(statuses: number[]): Promise<{ url: string; hits: Hit[]; hit(count: number): Promise<Hit[]>; daemon: { current: number } }> {
  const hits: Hit[] = [];
  const daemon = { current: 1 };
  let waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const answered = statuses[hits.length] ?? 204;
      hits.push({ headers: req.headers, body, answered, daemon: daemon.current });
      res.writeHead(answered).end();
      for (const waiter of waiters.splice(0)) waiter();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/skilld`,
    hits,
    daemon,
    hit: async (count) => {
      while (hits.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
      return hits;
    },
  };
}

/** A receiver checks the signature as docs/notify.md shows: HMAC-SHA256 of the raw body, compared in constant time. */
function validSignature(hit: Hit): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(hit.body).digest('hex')}`);
  const given = Buffer.from(String(hit.headers['x-skilld-signature-256'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

t.test('a job that asks: the receiver is told waiting_user with the question and a valid signature, then succeeded after the reply', async (t) => {
  const hook = await receiver([]);
  const daemon = await TestDaemon.start({ env, config: { notify: [{ url: hook.url, events: ['waiting_user', 'succeeded', 'failed'], secret_env: 'SKILLD_TEST_HOOK_SECRET', skills: ['echo-both'] }] } });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const other = await client.request<{ job_id: string }>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } });
  await waitForStatus(client, other.job_id);
  const { job_id } = await client.request<{ job_id: string }>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  const [asked] = await hook.hit(1);
  if (asked === undefined) throw new Error('no hit');
  t.ok(validSignature(asked), 'the signature checks out with the secret');
  t.equal(asked.headers['x-skilld-event'], 'waiting_user');
  t.equal(asked.headers['content-type'], 'application/json');
  t.match(asked.headers['user-agent'], /^skilld\//);
  t.match(asked.headers['x-skilld-delivery'], /^[0-9a-f-]{36}$/);
  const payload = JSON.parse(asked.body) as { event: string; ts: string; job: Record<string, unknown> };
  t.same(Object.keys(payload), ['event', 'ts', 'job']);
  t.equal(payload.event, 'waiting_user');
  t.same(Object.keys(payload.job), ['job_id', 'skill_id', 'status', 'owner', 'pending']);
  t.match(payload.job, { job_id, skill_id: 'echo-both', status: 'waiting_user' });
  t.same(payload.job['owner'], { uid: process.getuid?.() ?? 0, user: userInfo().username }, 'its owner, who created it');
  const { pending } = await client.request<{ pending: { interaction_id: number } }>('jobs/pending', { job_id });
  t.same(payload.job['pending'], pending, 'the question as jobs/pending gives it');

  await client.request('jobs/reply', { job_id, interaction_id: pending.interaction_id, response: 'Lisbon' });
  const hits = await hook.hit(2);
  t.equal(hits[1]?.headers['x-skilld-event'], 'succeeded');
  t.match(JSON.parse(hits[1]?.body ?? '{}'), { event: 'succeeded', job: { job_id, status: 'succeeded', pending: null } });
  t.not(hits[1]?.headers['x-skilld-delivery'], asked.headers['x-skilld-delivery'], 'a delivery id per delivery');
  t.ok(hits.every(validSignature));
  t.equal(hits.length, 2, 'the echo-auto job is not a skill this webhook asked for');

  await daemon.logged((line) => line.includes('"notify attempt"') && line.includes('"succeeded"'));
  const log = await client.request<{ attempts: NotifyAttemptView[] }>('notify/log', {});
  t.same(log.attempts.map((a) => [a.event, a.job_id, a.attempt, a.status, a.outcome, a.url]), [
    ['waiting_user', job_id, 1, 204, 'delivered', hook.url],
    ['succeeded', job_id, 1, 204, 'delivered', hook.url],
  ]);
});

t.test('500 twice: delivered on the third try with the same delivery id, across a restart of the daemon; skillctl notify log shows the tries', async (t) => {
  const hook = await receiver([500, 500]);
  const config = { notify: [{ url: `${hook.url}?token=not-shown`, events: ['succeeded'], secret_env: 'SKILLD_TEST_HOOK_SECRET' }] };
  const first = await TestDaemon.start({ env, config });
  t.teardown(() => first.cleanup());
  const client = await first.client();
  const { job_id } = await client.request<{ job_id: string }>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok' } });
  await hook.hit(1);
  // The first try's outcome is on disk once the daemon logs it; then the daemon dies, hard.
  await first.logged((line) => line.includes('"notify attempt"'));
  await first.kill();
  hook.daemon.current = 2;
  const second = await TestDaemon.start({ dir: first.dir, env, config });
  t.teardown(() => second.cleanup());
  const hits = await hook.hit(3);
  t.same(hits.map((hit) => hit.answered), [500, 500, 204]);
  t.equal(hits[2]?.daemon, 2, 'the restarted daemon delivered it');
  t.same(new Set(hits.map((hit) => hit.headers['x-skilld-delivery'])).size, 1, 'one delivery id on every try');
  t.ok(hits.every(validSignature), 'each try signed');
  t.ok(hits.every((hit) => hit.body === hits[0]?.body), 'the same body each time');
  t.match(JSON.parse(hits[0]?.body ?? '{}'), { event: 'succeeded', job: { job_id, status: 'succeeded' } });

  await second.logged((line) => line.includes('"notify attempt"') && line.includes('"delivered"'));
  const ctl = (argv: string[]) => runSkillctl([...argv, '--socket', second.socket], { ...process.env, NO_COLOR: '1' });
  const json = await ctl(['notify', 'log', '--json']);
  t.equal(json.code, 0, json.stderr);
  const { attempts } = JSON.parse(json.stdout) as { attempts: NotifyAttemptView[] };
  t.same(attempts.map((a) => [a.attempt, a.status, a.outcome]), [[1, 500, 'retrying'], [2, 500, 'retrying'], [3, 204, 'delivered']], 'the tries before the restart too');
  t.same(new Set(attempts.map((a) => a.delivery_id)), new Set([hits[0]?.headers['x-skilld-delivery']]));
  t.ok(attempts.every((a) => a.url === hook.url), 'shown without its query');
  t.equal(attempts[2]?.next_at, null);
  t.ok(attempts.slice(0, 2).every((a) => a.next_at !== null), 'a time for each retry');

  const text = await ctl(['notify', 'log', '-n', '2']);
  t.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  t.match(lines[0], /^WHEN +EVENT +JOB +TRY +ANSWER +NEXT +DELIVERY +URL$/);
  t.equal(lines.length, 3, 'the last two tries');
  t.match(lines[1], new RegExp(`succeeded +${job_id} +2 +HTTP 500 +retried `));
  t.match(lines[2], new RegExp(`succeeded +${job_id} +3 +HTTP 204 +delivered `));
  t.notMatch(text.stdout, /not-shown/);
});
