// What a receiver gets (docs/notify.md, "Payload" and "Headers"): the body's shape, the headers,
// GitHub's signature scheme checked against a known HMAC, and the URL as it may be shown.
import t from 'tap';
import { buildPayload, deliveryHeaders, hookKey, shownUrl, signature } from '../../daemon/notify/payload.js';

t.test('the signature is sha256= and the hex HMAC-SHA256 of the raw body, as GitHub signs (its documented example)', async (t) => {
  t.equal(signature('Hello, World!', "It's a Secret to Everybody"), 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
  t.not(signature('Hello, World! ', "It's a Secret to Everybody"), signature('Hello, World!', "It's a Secret to Everybody"), 'one byte more, another signature');
});

t.test('waiting_user: the job with its owner and the question as jobs/pending gives it', async (t) => {
  const pending = { interaction_id: 1, prompt: 'Which city should I use?', kind: 'choose_one', options: [{ label: 'Paris', value: 'paris' }] };
  const payload = buildPayload('waiting_user', '2026-11-23T15:07:59.825Z', { job_id: 'job-1', skill_id: 'plan-trip', owner: { uid: 1000, user: 'alice' } }, pending);
  t.same(payload, {
    event: 'waiting_user',
    ts: '2026-11-23T15:07:59.825Z',
    job: { job_id: 'job-1', skill_id: 'plan-trip', status: 'waiting_user', owner: { uid: 1000, user: 'alice' }, pending },
  });
  t.same(Object.keys(JSON.parse(JSON.stringify(payload)) as object), ['event', 'ts', 'job'], 'exactly these keys on the wire');
});

t.test('an end: owner null when the job has none, pending null whatever is given', async (t) => {
  const payload = buildPayload('failed', '2026-11-23T15:08:00.000Z', { job_id: 'job-2', skill_id: 'summarize-text' }, { interaction_id: 1, prompt: 'x', kind: 'free_text' });
  t.same(payload.job, { job_id: 'job-2', skill_id: 'summarize-text', status: 'failed', owner: null, pending: null });
});

t.test('the headers: event, delivery id, signature of the very body sent', async (t) => {
  const body = JSON.stringify({ event: 'succeeded' });
  t.same(deliveryHeaders({ id: 'd-1', event: 'succeeded', body }, 'k', 'skilld/0.1.0'), {
    'Content-Type': 'application/json',
    'User-Agent': 'skilld/0.1.0',
    'X-Skilld-Event': 'succeeded',
    'X-Skilld-Delivery': 'd-1',
    'X-Skilld-Signature-256': signature(body, 'k'),
  });
});

t.test('a URL is shown as scheme://host/path: userinfo, query and fragment are left out; a webhook is stored by a digest', async (t) => {
  t.equal(shownUrl('https://bot:pw@hooks.example.com:8443/in/skilld?token=abc#x'), 'https://hooks.example.com:8443/in/skilld');
  t.equal(shownUrl('http://127.0.0.1:9000'), 'http://127.0.0.1:9000/');
  const key = hookKey('https://bot:pw@hooks.example.com/in?token=abc');
  t.match(key, /^[0-9a-f]{32}$/);
  t.not(key, hookKey('https://bot:pw@hooks.example.com/in?token=abd'), 'another URL, another key');
});
