// `notify` in the config (docs/notify.md, "Configuration"): what a webhook entry becomes, and
// each mistake stopping start-up with a message naming the key.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFiles } from '../helpers/config-files.js';

const dir = await mkdtemp(join(tmpdir(), 'skilld-notify-config-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const { load, problem } = configFiles(dir, { HOOK_SECRET: 's3cret' });
const hook = (given: Record<string, unknown> = {}): Record<string, unknown> => ({ url: 'https://hooks.example.com/skilld', events: ['waiting_user'], secret_env: 'HOOK_SECRET', ...given });

t.test('a webhook: its url as written, its events, the secret by name, every skill and an hour of retries unless said', async (t) => {
  t.same((await load({})).notify, [], 'none without the key');
  const config = await load({ notify: [hook(), hook({ url: 'http://user:pw@127.0.0.1:8080/in?token=x', events: ['failed', 'succeeded', 'canceled', 'failed'], skills: ['plan-trip'], retry_for: '90m' })] });
  t.same(config.notify, [
    { url: 'https://hooks.example.com/skilld', events: ['waiting_user'], secret_env: 'HOOK_SECRET', skills: null, retry_for_ms: 3_600_000 },
    { url: 'http://user:pw@127.0.0.1:8080/in?token=x', events: ['failed', 'succeeded', 'canceled'], secret_env: 'HOOK_SECRET', skills: ['plan-trip'], retry_for_ms: 5_400_000 },
  ]);
  t.notMatch(JSON.stringify(config), /s3cret/, 'the secret itself is nowhere in the config');
  t.equal((await load({ notify: [hook({ retry_for: '0s' })] })).notify[0]?.retry_for_ms, 0, 'no retries: one attempt');
});

t.test('a url that is not http(s) stops start-up, naming the key and the file', async (t) => {
  for (const url of ['ftp://example.com/in', 'file:///tmp/hook', 'hooks.example.com/in', 'mailto:ops@example.com', 42]) {
    const message = await problem({ notify: [hook({ url })] });
    t.match(message, /^config key "notify\[0\]\.url" must be an http:\/\/ or https:\/\/ URL with a host \(config file .*config-\d+\.json\)$/, String(url));
  }
});

t.test('an unknown event, an empty list, an unknown key or a URL listed twice stops start-up', async (t) => {
  t.match(await problem({ notify: [hook(), hook({ events: ['waiting_user', 'running'] })] }), /^config key "notify\[1\]\.events" has "running", which is not one of waiting_user, failed, succeeded, canceled/);
  t.match(await problem({ notify: [hook({ events: [] })] }), /^config key "notify\[0\]\.events" must be a non-empty list/);
  t.match(await problem({ notify: [hook({ secret: 'inline' })] }), /^config key "notify\[0\]\.secret" is unknown/);
  t.match(await problem({ notify: hook() }), /^config key "notify" must be a list of webhooks/);
  t.match(await problem({ notify: [hook({ skills: [] })] }), /^config key "notify\[0\]\.skills" must be a non-empty list of skill ids/);
  t.match(await problem({ notify: [hook(), hook({ events: ['failed'] })] }), /^config key "notify\[1\]\.url" is notify\[0\]'s too: list each webhook once/);
});

t.test('secret_env: a variable name that is set in the daemon\'s environment, else start-up stops naming it', async (t) => {
  t.match(await problem({ notify: [hook({ secret_env: 'NOT_SET_HERE' })] }), /^config key "notify\[0\]\.secret_env" names NOT_SET_HERE, which is not set in the daemon's environment \(config file .*\)$/);
  t.match(await problem({ notify: [hook({ secret_env: 'a-b' })] }), /^config key "notify\[0\]\.secret_env" must name an environment variable/);
  t.match(await problem({ notify: [hook({ secret_env: undefined })] }), /^config key "notify\[0\]\.secret_env" must name/, 'it is required');
  const empty = configFiles(dir, { HOOK_SECRET: '' });
  t.match(await empty.problem({ notify: [hook()] }), /names HOOK_SECRET, which is not set/, 'an empty value is no secret');
});

t.test('retry_for: a duration with a unit, at most a week', async (t) => {
  for (const retryFor of ['3600', 'soon', '8d', 60, '']) {
    t.match(await problem({ notify: [hook({ retry_for: retryFor })] }), /^config key "notify\[0\]\.retry_for" must be a duration with a unit/, String(retryFor));
  }
  t.equal((await load({ notify: [hook({ retry_for: '7d' })] })).notify[0]?.retry_for_ms, 7 * 24 * 3_600_000);
});
