import t from 'tap';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realEngineBins } from '../fixtures/engine-homes.js';
import type { ModelReply, ModelRequest } from '../fixtures/model-server.js';
import { model, realEngineRig, type RealEngineRig } from '../helpers/real-engine-runs.js';
import { ROOT, waitForStatus, type JobView } from '../helpers/daemon.js';
import { replayOf } from '../helpers/job-events.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { runSkillctl } from '../helpers/skillctl.js';

/**
 * The model gateway (docs/network.md) with the real Codex, Gemini CLI and Claude Code, offline against
 * the scripted model server: the key is in the test daemon's environment alone, the engines get a
 * token of their job; the provider's 429, 401 and usage as the server answers them.
 */
const bins = realEngineBins(join(ROOT, 'node_modules'));
t.setTimeout(300_000);

const KEY = 'sk-test-REAL-provider-key-7f3a9c';
/** The key in two halves: a command that names them apart leaves no copy of the key in the engine's transcript. */
const [HALF_A, HALF_B] = [KEY.slice(0, 12), KEY.slice(12)];
/** Where each engine sends its key, as the provider sees it. */
const KEY_SEEN = { codex: (call: ModelRequest) => call.headers.authorization, gemini: (call: ModelRequest) => call.headers['x-goog-api-key'], claude: (call: ModelRequest) => call.headers['x-api-key'] } as const;
const KEY_SENT = { codex: `Bearer ${KEY}`, gemini: KEY, claude: KEY } as const;
/** What names the gateway to each engine in its environment (Codex's provider is on its command line: the token's variable). */
const ENDPOINT = { codex: /^SKILLD_GATEWAY_TOKEN=skilld-/m, gemini: /^GOOGLE_GEMINI_BASE_URL=http:\/\/127\.0\.0\.1:3128$/m, claude: /^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:3128$/m } as const;

/** In its first turn a tool looks for the key in its environment, its home, its workspace and /tmp, then the agent asks; the reply finishes the job. */
function leakCheck(request: ModelRequest): ModelReply {
  const first = request.userTexts.find((text) => text.startsWith('Run the skill')) ?? '';
  const resumed = request.prompt !== null && !request.prompt.startsWith('Run the skill');
  if (!first.includes('- scenario: "leak"') || resumed) return model(request);
  if (request.afterToolResult) return { text: 'Which city should I use?' };
  return { toolCall: { command: `mkdir -p artifacts; env > artifacts/env.txt; A='${HALF_A}'; B='${HALF_B}'; grep -rlF "$A$B" "$HOME" . /tmp > artifacts/found.txt 2>/dev/null; echo "grep=$?" >> artifacts/found.txt` } };
}

/** Every file under `dir` whose bytes hold `text`. */
async function filesHolding(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(text)) found.push(path);
  }
  return found;
}

const create = (rig: RealEngineRig, engine: string, scenario: string, mode = 'auto'): Promise<JobView> =>
  rig.client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: mode, input: { scenario } });

for (const engine of ['codex', 'gemini', 'claude'] as const) {
  const bin = bins[engine];
  const skip = bin === null ? `the real ${engine} CLI is not installed in node_modules (npm ci installs it); these tests did NOT run` : NO_SANDBOX;
  t.test(`the real ${engine} CLI through the model gateway`, { skip }, async (t) => {
    const rig = await realEngineRig(t, engine, bin as string, engine === 'gemini' ? { profile: 'resumable' } : {}, { key: KEY, retryMaxSec: 3 });
    const { server, client, daemon } = rig;

    t.test('an interactive job runs a tool, waits, resumes and succeeds; the key reaches the provider and nothing of the job', async (t) => {
      server.script(leakCheck);
      const since = server.modelRequests().length;
      const created = await create(rig, engine, 'leak', 'interactive');
      const waiting = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
      t.match(waiting, { status: 'waiting_user', isolation: 'sandbox' }, JSON.stringify(waiting.error));
      await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
      const done = await waitForStatus(client, created.job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      const calls = server.modelRequests().slice(since);
      t.ok(calls.length >= 3, 'a tool call, its result, and the resumed turn');
      t.same([...new Set(calls.map(KEY_SEEN[engine]))], [KEY_SENT[engine]], 'every call reached the provider with the real key');
      const workspace = join(daemon.runDir(created.job_id), 'workspace');
      const env = await readFile(join(workspace, 'artifacts', 'env.txt'), 'utf8');
      t.notMatch(env, KEY, "the tool's environment does not hold the key");
      t.match(env, /skilld-[A-Za-z0-9_-]{32}/, "it holds the job's token");
      t.match(env, ENDPOINT[engine], 'and the gateway as its model endpoint');
      t.equal(await readFile(join(workspace, 'artifacts', 'found.txt'), 'utf8'), 'grep=1\n', 'no file of its home, its workspace or /tmp holds the key');
      t.same(await filesHolding(daemon.runDir(created.job_id), KEY), [], "no file of the job's run folder holds the key");
      t.same(done['usage'], { input_tokens: 10 * calls.length, output_tokens: 5 * calls.length, cached_input_tokens: 0, requests: calls.length }, 'usage: the sum of what the provider reported, over both turns');
      const shown = await runSkillctl(['show', created.job_id, '--socket', daemon.socket], process.env);
      t.match(shown.stdout, `${10 * calls.length} tokens in (0 cached), ${5 * calls.length} out, ${calls.length} model calls`, 'skillctl show says it');
      const status = await runSkillctl(['status', '--socket', daemon.socket], process.env);
      t.match(status.stdout, `${engine} calls ${server.url} through the daemon's gateway`, 'skillctl status names the gateway');
    });

    t.test('a provider that limits the rate twice: the gateway retries, the job succeeds, each retry an event', async (t) => {
      let limited = 2;
      server.script((request) => (limited-- > 0 ? { error: { status: 429, message: 'slow down', retryAfter: '0' } } : model(request)));
      const done = await waitForStatus(client, (await create(rig, engine, 'ok')).job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      const retries = (await replayOf(client, done.job_id)).filter((event) => event.type === 'provider_retry').map((event) => event.data);
      t.match(retries, [{ status: 429, retry: 1 }, { status: 429, retry: 2 }]);
      t.equal(retries.length, 2);
    });

    t.test('a provider that limits the rate past retry_max_sec: PROVIDER_RATE_LIMITED', async (t) => {
      server.script(() => ({ error: { status: 429, message: 'quota exceeded for this key', retryAfter: '1' } }));
      const done = await waitForStatus(client, (await create(rig, engine, 'ok')).job_id);
      t.match(done, { status: 'failed', error: { code: 'PROVIDER_RATE_LIMITED', message: /answered 429 after \d+ retr.*quota exceeded for this key/ } });
    });

    t.test('a provider that refuses the key: PROVIDER_AUTH_FAILED at once, quoting it', async (t) => {
      server.script(() => ({ error: { status: 401, message: 'invalid x-api-key' } }));
      const done = await waitForStatus(client, (await create(rig, engine, 'ok')).job_id);
      t.match(done, { status: 'failed', error: { code: 'PROVIDER_AUTH_FAILED', message: /refused the gateway's key \(401\): invalid x-api-key/ } });
      t.notMatch(JSON.stringify(done.error), KEY);
    });
  });
}

t.test('the real claude CLI in a live session through the model gateway', { skip: bins.claude === null ? 'the real claude CLI is not installed in node_modules; this test did NOT run' : NO_SANDBOX }, async (t) => {
  const rig = await realEngineRig(t, 'claude', bins.claude as string, { profile: 'sticky_process' }, { key: KEY });
  const since = rig.server.modelRequests().length;
  const created = await create(rig, 'claude', 'ask', 'interactive');
  t.match(created, { interactive_profile: { kind: 'sticky_process' } });
  t.equal((await waitForStatus(rig.client, created.job_id, ['waiting_user', 'failed', 'succeeded'])).status, 'waiting_user');
  await rig.client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'Rome' });
  const done = await waitForStatus(rig.client, created.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const calls = rig.server.modelRequests().slice(since);
  t.same([...new Set(calls.map((call) => call.headers['x-api-key']))], [KEY]);
  t.same(done['usage'], { input_tokens: 10 * calls.length, output_tokens: 5 * calls.length, cached_input_tokens: 0, requests: calls.length }, 'both turns of the live process counted');
});

t.test('the real claude CLI goes on calling through the gateway after the daemon is killed and restarted mid-turn', { skip: bins.claude === null ? 'the real claude CLI is not installed in node_modules; this test did NOT run' : NO_SANDBOX }, async (t) => {
  const rig = await realEngineRig(t, 'claude', bins.claude as string, {}, { key: KEY });
  // The tool waits for a file the test writes once the new daemon runs: the engine's next call is made through the reopened gateway.
  rig.server.script((request) => (request.afterToolResult ? model(request) : { toolCall: { command: 'until [ -e go ]; do sleep 0.05; done; echo went' } }));
  const created = await create(rig, 'claude', 'ok');
  const workspace = join(rig.daemon.runDir(created.job_id), 'workspace');
  await rig.server.waitForModelRequest();
  const { client } = await rig.restart();
  const since = rig.server.modelRequests().length;
  await writeFile(join(workspace, 'go'), '');
  const done = await waitForStatus(client, created.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const after = rig.server.modelRequests().slice(since);
  t.ok(after.length >= 1, 'the engine called its model after the restart');
  t.same([...new Set(after.map((call) => call.headers['x-api-key']))], [KEY], "with the job's token, known to the new daemon by its hash");
  t.match(done['usage'], { requests: after.length }, 'what the new daemon saw of the turn is counted');
});
