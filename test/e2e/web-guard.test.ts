// The page server's guard and limits, without a browser (web.test.ts drives the page in one):
// the token and its cookie, the Host check against DNS rebinding, cross-site calls, the methods
// the page may call, body limits, `--listen`, and how many job views it follows at once.
import t from 'tap';
import type { JobView } from '../helpers/daemon.js';
import { TestDaemon, waitForStatus } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';
import { MAX_JOB_STREAMS } from '../../clients/web/bridge.js';
import { exchange, openStream, startWeb } from '../helpers/web.js';

const daemon = await TestDaemon.start();
const client = await daemon.client();
const web = await startWeb(daemon.socket);
t.teardown(async () => {
  await web.stop();
  await daemon.cleanup();
});

t.test('the token: 401 without it, a wrong Host and cross-site calls refused, the daemon stopped by no call', async (t) => {
  const bare = await exchange(web.port, '/', { headers: { Host: `127.0.0.1:${web.port}` } });
  t.equal(bare.status, 401);
  t.match(JSON.parse(bare.body), { error: { code: 'UNAUTHORIZED' } });
  t.equal((await exchange(web.port, '/?token=wrong', { headers: { Host: `127.0.0.1:${web.port}` } })).status, 401);
  const signIn = await exchange(web.port, `/?token=${web.token}`, { headers: { Host: `127.0.0.1:${web.port}` } });
  t.equal(signIn.status, 303);
  t.equal(signIn.headers['location'], '/');
  const cookie = String(signIn.headers['set-cookie']).split(';')[0] ?? '';
  t.match(String(signIn.headers['set-cookie']), /HttpOnly; SameSite=Strict; Path=\//);
  const page = await exchange(web.port, '/', { headers: { Host: `localhost:${web.port}`, Cookie: cookie } });
  t.equal(page.status, 200);
  t.match(page.headers['content-security-policy'], /default-src 'none'; script-src 'self' 'sha256-/);
  t.equal(page.headers['x-frame-options'], 'DENY');
  // DNS rebinding: another name that leads here, with the right cookie even.
  const rebound = await exchange(web.port, '/', { headers: { Host: `evil.example:${web.port}`, Cookie: cookie } });
  t.equal(rebound.status, 403);
  t.match(JSON.parse(rebound.body), { error: { code: 'HOST_NOT_ALLOWED' } });
  const own = { Host: `127.0.0.1:${web.port}`, Cookie: cookie };
  const body = JSON.stringify({ method: 'daemon/status' });
  const fromElsewhere = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: 'http://evil.example', 'Content-Type': 'application/json' }, body });
  t.equal(fromElsewhere.status, 403);
  t.match(JSON.parse(fromElsewhere.body), { error: { code: 'CROSS_SITE' } });
  // A form of another page can post text/plain without asking: refused whatever its Origin says.
  const asForm = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'text/plain' }, body });
  t.equal(asForm.status, 403);
  const noCookie = await exchange(web.port, '/rpc', { method: 'POST', headers: { Host: own.Host, Origin: web.origin, 'Content-Type': 'application/json' }, body });
  t.equal(noCookie.status, 401);
  const ok = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'application/json' }, body });
  t.match(JSON.parse(ok.body), { result: { slots: { max: Number } } });
  const stop = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ method: 'daemon/stop' }) });
  t.equal(stop.status, 403);
  t.match(JSON.parse(stop.body), { error: { code: 'METHOD_NOT_ALLOWED' } });
  t.match(await client.request('daemon/ping'), { ok: true });
  const broken = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'application/json' }, body: '{"method":' });
  t.match(JSON.parse(broken.body), { error: { code: 'PARSE_ERROR' } });
  const tooLarge = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'application/json' }, body: `{"method":"daemon/status","params":"${'x'.repeat(1024 * 1024)}"}` });
  t.match(JSON.parse(tooLarge.body), { error: { code: 'REQUEST_TOO_LARGE' } });
  t.equal(tooLarge.status, 413);
  const notACall = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'application/json' }, body: '[]' });
  t.match(JSON.parse(notACall.body), { error: { code: 'INVALID_REQUEST' } });
  const daemonError = await exchange(web.port, '/rpc', { method: 'POST', headers: { ...own, Origin: web.origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ method: 'jobs/get', params: { job_id: 'job-none' } }) });
  t.match(JSON.parse(daemonError.body), { error: { code: 'JOB_NOT_FOUND', message: String } });
  t.equal((await exchange(web.port, '/nothing', { headers: own })).status, 404);
  t.equal((await exchange(web.port, '/page/main.js', { method: 'POST', headers: own })).status, 405);
  const head = await exchange(web.port, '/page/style.css', { method: 'HEAD', headers: own });
  t.match(head, { status: 200, body: '', headers: { 'content-type': /text\/css/ } });
  t.equal((await exchange(web.port, '/events', { headers: { Host: own.Host } })).status, 401, 'events need the cookie too');
});

t.test('a sign-in another page began (Sec-Fetch-Site: cross-site) is sent on to / by a page of its own, which the Strict cookie reaches', async (t) => {
  const at = { Host: `127.0.0.1:${web.port}` };
  const typed = await exchange(web.port, `/?token=${web.token}`, { headers: { ...at, 'Sec-Fetch-Site': 'none' } });
  t.equal(typed.status, 303, 'the address typed: a redirect');
  const led = await exchange(web.port, `/?token=${web.token}`, { headers: { ...at, 'Sec-Fetch-Site': 'cross-site' } });
  t.equal(led.status, 200);
  t.match(String(led.headers['set-cookie']), new RegExp(`^skilld_web_${web.port}=${web.token}; HttpOnly; SameSite=Strict`));
  t.match(led.body, '<meta http-equiv="refresh" content="0;url=/">');
  t.notMatch(led.body, web.token, 'the page does not hold the token');
  t.match(led.headers['content-security-policy'], /default-src 'none'/);
  const wrong = await exchange(web.port, '/?token=wrong', { headers: { ...at, 'Sec-Fetch-Site': 'cross-site' } });
  t.equal(wrong.status, 401, 'a wrong token is refused, wherever the visit began');
  t.equal(wrong.headers['set-cookie'], undefined);
});

t.test('--listen on another address answers to it and to the names allowed, not to localhost; a bad port is a usage error', async (t) => {
  const other = await startWeb(daemon.socket, ['--listen', '127.0.0.2', '--allow-host', 'skilld.internal']);
  t.teardown(() => other.stop());
  t.match(other.url, /^http:\/\/127\.0\.0\.2:\d+\/\?token=/);
  const at = (host: string): Promise<number> => exchange(other.port, '/', { headers: { Host: `${host}:${other.port}` } }, '127.0.0.2').then((answer) => answer.status);
  t.equal(await at('127.0.0.2'), 401, 'its own address: on to the token');
  t.equal(await at('skilld.internal'), 401, 'a name allowed');
  t.equal(await at('localhost'), 403);
  const bad = await runSkillctl(['web', '--port', '70000', '--socket', daemon.socket], process.env);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--port 70000 is not a port/);
});

t.test('job views are followed up to MAX_JOB_STREAMS at once; one more is told TOO_MANY_STREAMS', async (t) => {
  const made = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} });
  await waitForStatus(client, made.job_id);
  const signIn = await exchange(web.port, `/?token=${web.token}`, { headers: { Host: `127.0.0.1:${web.port}` } });
  const cookie = String(signIn.headers['set-cookie']).split(';')[0] ?? '';
  const path = `/events?job_id=${encodeURIComponent(made.job_id)}&after_seq=0`;
  const streams = Array.from({ length: MAX_JOB_STREAMS }, () => openStream(web.port, path, cookie));
  t.teardown(() => streams.forEach((stream) => stream.close()));
  for (const stream of streams) t.match(await stream.next('job'), { job_id: made.job_id, seq: 1 });
  const refused = openStream(web.port, path, cookie);
  t.teardown(() => refused.close());
  t.match(await refused.next('failure'), { code: 'TOO_MANY_STREAMS', message: /at most 16 jobs at once/ });
});
