// The interactive turn gate through the real daemon (resumable profile: the fakes pass the probe).
// Scenarios LC-1, LC-2, LC-13..LC-17, D-1, D-4..D-8, API-3, API-15..API-17, PR-15..PR-17 and the
// patched SKILL.md (TP-5..TP-7).
import t from 'tap';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcClient } from '../../rpc/client.js';
import { ENGINE_NAMES, FIXTURES, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { EventTrail } from '../helpers/event-trail.js';

interface Job extends JobView {
  attempt: number;
  interactive_profile: { kind: string; reason: string } | null;
  session_handle: unknown;
  max_attempt: number | null;
  pending_interaction_id: number | null;
  wait_deadline_at: string | null;
}
interface Pending {
  interaction_id: number;
  prompt: string;
  kind: string;
  options?: Array<{ label: string; value: unknown }>;
}

// Tests here are independent of each other and of slot counts: run them side by side.
t.jobs = 4;
const daemon = await TestDaemon.start({ config: { max_concurrent: 16 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

async function create(client: RpcClient, body: Record<string, unknown>): Promise<Job> {
  return client.request<Job>('jobs/create', { skill_id: 'echo-both', execution_mode: 'interactive', ...body });
}
async function settleOrWait(jobId: string): Promise<Job> {
  return (await waitForStatus(client, jobId, ['waiting_user', 'succeeded', 'failed', 'canceled'])) as Job;
}
async function pendingOf(jobId: string): Promise<Pending | null> {
  return (await client.request<{ pending: Pending | null }>('jobs/pending', { job_id: jobId })).pending;
}
async function reply(jobId: string, interactionId: number, response: unknown): Promise<void> {
  await client.request('jobs/reply', { job_id: jobId, interaction_id: interactionId, response });
}
async function resultOf(jobId: string): Promise<{ status: string; output: Record<string, unknown> | null; warnings: string[]; error: { code: string } | null }> {
  return client.request('jobs/result', { job_id: jobId });
}
async function resultFile(jobId: string): Promise<{ status: string; warnings: string[]; error: { code: string } | null }> {
  const saved = await daemon.storedDoc<{ status: string; warnings: string[]; error: { code: string } | null }>(jobId, 'result');
  if (saved === null) throw new Error(`job ${jobId} has no stored result`);
  return saved;
}

t.test('LC-1 API-15 API-3 D-5 no ask_user hint (ask_plain): waiting_user with an open_text pending whose id is the attempt (its survival of a restart: interactive-deadline); the reply loop finishes the job', async (t) => {
  await Promise.all(
    ENGINE_NAMES.map(async (engine) => {
      const created = await create(client, { engine, input: { scenario: 'ask_plain', emit: { greeting: engine } } });
      const trail = await EventTrail.follow(daemon, created.job_id);
      const waiting = await settleOrWait(created.job_id);
      t.equal(waiting.status, 'waiting_user', `${engine}: waiting_user (${JSON.stringify(waiting.error)})`);
      t.equal(waiting.attempt, 1, `${engine}: one turn ran`);
      t.equal(waiting.pending_interaction_id, 1, `${engine}: pending_interaction_id = attempt`);
      t.same(waiting.error, null, `${engine}: no error`);
      t.same(waiting.warnings, [], `${engine}: no warning for a plain question`);
      const pending = await pendingOf(created.job_id);
      t.same(pending, { interaction_id: 1, prompt: 'Which city should I use?', kind: 'open_text' }, `${engine}: prompt is the last assistant message, kind open_text, no options`);
      await reply(created.job_id, pending?.interaction_id ?? -1, 'Paris');
      const done = await waitForStatus(client, created.job_id);
      t.equal(done.status, 'succeeded', `${engine}: the reply finishes the job (${JSON.stringify(done.error)})`);
      t.same((await resultOf(created.job_id)).output, { greeting: engine, reply: 'Paris' }, `${engine}: the reply reached the agent`);
      await trail.finished();
      t.same(trail.statuses, ['queued', 'running', 'waiting_user', 'queued', 'running', 'succeeded'], `${engine}: status sequence`);
    }),
  );
});

t.test('LC-2 D-4 API-3 D-5 a malformed <ASK_USER_YAML> block: waiting_user with warning ASK_USER_MALFORMED, never failed; the pending prompt is the message without the block', async (t) => {
  await Promise.all(
    ENGINE_NAMES.map(async (engine) => {
      const created = await create(client, { engine, input: { scenario: 'ask_malformed' } });
      const trail = await EventTrail.follow(daemon, created.job_id);
      const waiting = await settleOrWait(created.job_id);
      t.equal(waiting.status, 'waiting_user', `${engine}: still waiting_user (${JSON.stringify(waiting.error)})`);
      t.same(waiting.error, null, `${engine}: not failed`);
      t.same(waiting.warnings, ['ASK_USER_MALFORMED'], `${engine}: warning ASK_USER_MALFORMED on the job`);
      await trail.until((e) => e.type === 'input_required');
      t.ok(trail.of('warning').some((e) => e.data['code'] === 'ASK_USER_MALFORMED'), `${engine}: a warning event says so`);
      const pending = await pendingOf(created.job_id);
      t.same(pending, { interaction_id: 1, prompt: 'Which city?', kind: 'open_text' }, `${engine}: fallback prompt without the hint block, kind open_text`);
      await reply(created.job_id, 1, 'Rome');
      const done = await waitForStatus(client, created.job_id);
      t.equal(done.status, 'succeeded', `${engine}: the job goes on after the reply`);
      const result = await resultOf(created.job_id);
      t.same(result.output, { greeting: 'hello', reply: 'Rome' }, `${engine}: the malformed hint never became business output`);
      t.ok(result.warnings.includes('ASK_USER_MALFORMED'), `${engine}: the warning stays visible in jobs/result`);
    }),
  );
});

t.test('LC-13 D-1 TP-2 interactive: done marker + valid output -> succeeded at once, no warning, never waiting', async (t) => {
  const created = await create(client, { engine: 'codex', input: { scenario: 'ok', emit: { greeting: 'done' } } });
  const trail = await EventTrail.follow(daemon, created.job_id);
  const done = (await waitForStatus(client, created.job_id)) as Job;
  t.equal(done.status, 'succeeded', `succeeded (${JSON.stringify(done.error)})`);
  t.same(done.warnings, [], 'no warning');
  t.equal(done.attempt, 1, 'one turn');
  const result = await resultOf(created.job_id);
  t.same(result.output, { greeting: 'done' }, 'output without the marker');
  t.same(result.warnings, [], 'jobs/result has no warning');
  await trail.finished();
  t.same(trail.statuses, ['queued', 'running', 'succeeded'], 'never waiting');
  t.same(trail.of('input_required'), [], 'no input_required');

  t.test('TP-5 TP-7 TP-6 the run\'s patched SKILL.md in interactive mode invites questions, shows the <ASK_USER_YAML> block and never says not to ask', async (t) => {
    const runDir = daemon.runDir(created.job_id);
    const skillMd = await readFile(join(runDir, 'skill', 'SKILL.md'), 'utf8');
    t.match(skillMd, /^# echo-both/, 'the original instructions come first');
    t.match(skillMd, /<ASK_USER_YAML>[\s\S]*prompt:[\s\S]*kind:[\s\S]*options:[\s\S]*<\/ASK_USER_YAML>/, 'TP-5 the hint block with prompt, kind and options');
    t.match(skillMd, /\bask\b/i, 'TP-5 asking is invited');
    t.match(skillMd, /one question per turn/i, 'TP-5 one question per turn');
    t.notMatch(skillMd, /(do not|don't|never|must not|should not|cannot)\s+ask/i, 'TP-7 no "do not ask" text');
    t.notMatch(skillMd, /Nobody is available|unattended/i, 'TP-7 the auto patch is absent');
    t.match(skillMd, join(runDir, 'workspace', 'artifacts'), 'TP-6 artifact redirection in interactive mode too');
    t.match(skillMd, /"__SKILL_DONE__": true/, 'the completion contract is there');
  });
});

t.test('LC-14 D-8 interactive: done marker + invalid output -> failed OUTPUT_INVALID, never waiting_user', async (t) => {
  const created = await create(client, { engine: 'gemini', input: { scenario: 'marker_invalid' } });
  const trail = await EventTrail.follow(daemon, created.job_id);
  const done = (await waitForStatus(client, created.job_id)) as Job;
  t.equal(done.status, 'failed');
  t.equal(done.error?.code, 'OUTPUT_INVALID');
  t.equal(done.attempt, 1, 'no further turn');
  await trail.finished();
  t.same(trail.statuses, ['queued', 'running', 'failed'], 'no fallback to waiting_user');
  t.same(trail.of('input_required'), [], 'no input_required');
  t.equal(await pendingOf(created.job_id), null, 'no pending');
  t.match(await resultOf(created.job_id), { status: 'failed', output: null, error: { code: 'OUTPUT_INVALID' } }, 'jobs/result');
});

t.test('LC-15 API-16 D-7 interactive: no marker + valid output -> succeeded with warning INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER in jobs/get, jobs/result and the audit record', async (t) => {
  const created = await create(client, { engine: 'iflow', input: { scenario: 'ok_plain', emit: { greeting: 'soft' } } });
  const trail = await EventTrail.follow(daemon, created.job_id);
  const done = (await waitForStatus(client, created.job_id)) as Job;
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  t.same(done.warnings, ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], 'jobs/get warning');
  const result = await resultOf(created.job_id);
  t.same(result.output, { greeting: 'soft' }, 'output');
  t.same(result.warnings, ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], 'jobs/result warning');
  t.same((await resultFile(created.job_id)).warnings, ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'], 'stored result warning');
  await trail.finished();
  t.ok(trail.of('warning').some((e) => e.data['code'] === 'INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER'), 'warning event');
  t.same(trail.statuses, ['queued', 'running', 'succeeded'], 'never waiting');
});

t.test('LC-16 API-17 D-6 D-7 interactive-only (max_attempt 3), a turn that never gives evidence: waits at 1 and 2, fails INTERACTIVE_MAX_ATTEMPT_EXCEEDED at attempt 3', async (t) => {
  // 'text' never asks and never gives valid output: each turn is "no evidence", so only max_attempt ends it.
  // (No fake scenario asks more than twice: 'ask_twice' finishes on turn 3 with the marker, see the D-1 test.)
  const engine = 'iflow';
  const created = await create(client, { skill_id: 'interactive-only', engine, input: { scenario: 'text' } });
  t.equal(created.max_attempt, 3, `${engine}: the job carries the skill's max_attempt`);
  for (const attempt of [1, 2]) {
    const waiting = await settleOrWait(created.job_id);
    t.equal(waiting.status, 'waiting_user', `${engine}: waiting after turn ${attempt}`);
    t.equal(waiting.attempt, attempt, `${engine}: attempt ${attempt}`);
    t.same(await pendingOf(created.job_id), { interaction_id: attempt, prompt: 'I could not produce a JSON result.', kind: 'open_text' }, `${engine}: pending ${attempt}`);
    await reply(created.job_id, attempt, `answer ${attempt}`);
  }
  const done = (await waitForStatus(client, created.job_id)) as Job;
  t.equal(done.status, 'failed', `${engine}: failed`);
  t.equal(done.error?.code, 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED', `${engine}: INTERACTIVE_MAX_ATTEMPT_EXCEEDED`);
  t.equal(done.attempt, 3, `${engine}: at attempt 3`);
  t.equal((await daemon.engineCalls(created.job_id)).length, 3, `${engine}: exactly 3 engine turns`);
  t.match(await resultOf(created.job_id), { status: 'failed', output: null, error: { code: 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED' } }, `${engine}: visible in jobs/result`);
  t.match(await resultFile(created.job_id), { status: 'failed', error: { code: 'INTERACTIVE_MAX_ATTEMPT_EXCEEDED' } }, `${engine}: and in the stored result`);
  const history = await client.request<{ interactions: unknown[] }>('jobs/history', { job_id: created.job_id });
  t.equal(history.interactions.length, 2, `${engine}: two answered rounds, no third question`);
});

t.test('D-1 D-6 interactive-only (max_attempt 3): the done marker at attempt 3 is strong evidence and beats the attempt limit; soft evidence succeeds with its warning', async (t) => {
  const strong = async (): Promise<void> => {
    const created = await create(client, { skill_id: 'interactive-only', engine: 'codex', input: { scenario: 'ask_twice', emit: { greeting: 'three' } } });
    for (const attempt of [1, 2]) {
      const waiting = await settleOrWait(created.job_id);
      t.equal(waiting.status, 'waiting_user', `waiting after turn ${attempt}`);
      t.same(await pendingOf(created.job_id), { interaction_id: attempt, prompt: `Question ${attempt}?`, kind: 'open_text' }, `pending ${attempt}`);
      await reply(created.job_id, attempt, `a${attempt}`);
    }
    const done = (await waitForStatus(client, created.job_id)) as Job;
    t.equal(done.status, 'succeeded', `marker at attempt 3 = max_attempt succeeds (${JSON.stringify(done.error)})`);
    t.equal(done.attempt, 3);
    t.same(done.warnings, []);
    t.same((await resultOf(created.job_id)).output, { greeting: 'three', reply: 'a2' });
  };
  const soft = async (): Promise<void> => {
    const created = await create(client, { skill_id: 'interactive-only', engine: 'gemini', input: { scenario: 'ok_plain' } });
    const done = (await waitForStatus(client, created.job_id)) as Job;
    t.equal(done.status, 'succeeded', 'valid output without marker: soft success');
    t.same(done.warnings, ['INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER']);
  };
  await Promise.all([strong(), soft()]);
});

t.test('LC-17 D-6 echo-both declares no max_attempt: ask_twice asks twice and succeeds on turn 3; a turn without evidence keeps waiting past 3 turns', async (t) => {
  const askTwice = async (): Promise<void> => {
    const created = await create(client, { engine: 'iflow', input: { scenario: 'ask_twice' } });
    t.equal(created.max_attempt, null, 'max_attempt null');
    for (const attempt of [1, 2]) {
      const waiting = await settleOrWait(created.job_id);
      t.equal(waiting.status, 'waiting_user', `ask_twice waiting after turn ${attempt}`);
      t.equal(waiting.pending_interaction_id, attempt);
      await reply(created.job_id, attempt, `r${attempt}`);
    }
    const done = (await waitForStatus(client, created.job_id)) as Job;
    t.equal(done.status, 'succeeded', 'ask_twice succeeds on turn 3');
    t.equal(done.attempt, 3);
    t.equal(done.max_attempt, null);
  };
  const unbounded = async (): Promise<void> => {
    const created = await create(client, { engine: 'gemini', input: { scenario: 'text' } });
    for (const attempt of [1, 2, 3]) {
      t.equal((await settleOrWait(created.job_id)).status, 'waiting_user', `no evidence: waiting after turn ${attempt}`);
      await reply(created.job_id, attempt, `r${attempt}`);
    }
    const fourth = await settleOrWait(created.job_id);
    t.equal(fourth.status, 'waiting_user', 'still waiting after turn 4: no attempt limit');
    t.equal(fourth.attempt, 4);
    t.equal(fourth.pending_interaction_id, 4, 'interaction ids stay monotonic');
    t.same(fourth.error, null);
    await client.request('jobs/cancel', { job_id: created.job_id });
  };
  await Promise.all([askTwice(), unbounded()]);
});

/**
 * No fake scenario asks without a session id ('no_session' finishes like 'ok'), so for PR-15..PR-17
 * each fake runs behind this filter, which deletes the session id from its output (codex
 * `thread.started`, gemini `session_id`, iflow `session-id`) and passes everything else through.
 */
const STRIP_SESSION_ID = `
import { spawn } from 'node:child_process';
import readline from 'node:readline';
const [fake, ...args] = process.argv.slice(2);
// The prompt comes on stdin: the fake reads it there.
const child = spawn(process.execPath, [fake, ...args], { stdio: ['inherit', 'pipe', 'pipe'] });
const drop = /"type":"thread\\.started"|"session_id":|"session-id":/;
for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
  readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
    // Claude Code names its session in every event: the member goes, the event stays.
    let event = null;
    try { event = JSON.parse(line); } catch {}
    if (event !== null && typeof event === 'object' && 'type' in event && 'session_id' in event) {
      delete event.session_id;
      to.write(JSON.stringify(event) + '\\n');
    } else if (!drop.test(line)) to.write(line + '\\n');
  });
}
child.on('close', (code) => { process.exitCode = code ?? 1; });
`;

t.test('PR-15 PR-16 PR-17 a turn that asks without a session id never enters waiting_user: failed SESSION_RESUME_FAILED', async (t) => {
  const tools = await mkdtemp(join(tmpdir(), 'skilld-nosession-'));
  const filter = join(tools, 'strip-session-id.mjs');
  await writeFile(filter, STRIP_SESSION_ID);
  // The resumable profile is forced (config `profile`) only to spare the probe's processes; the filter passes the probe as well.
  // The filter and the fakes are shown to the engines' sandboxes, which show node's installation alone; the engines' user reads them.
  await chmod(tools, 0o755);
  const engines = Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [process.execPath, filter, join(FIXTURES, `fake-${name}.mjs`)], profile: 'resumable', sandbox: { read_only: [tools, FIXTURES] } }]));
  const filtered = await TestDaemon.start({ config: { engines, max_concurrent: 4 } });
  t.teardown(async () => {
    await filtered.cleanup();
    await rm(tools, { recursive: true, force: true });
  });
  const c = await filtered.client();
  // Claude Code came after the requirement scenarios: it has no id of its own.
  const ids = { codex: 'PR-15', gemini: 'PR-16', iflow: 'PR-17', claude: '' } as const;
  await Promise.all(
    ENGINE_NAMES.map(async (engine) => {
      const id = `${ids[engine]} ${engine}`;
      const created = await create(c, { engine, input: { scenario: 'ask' } });
      const trail = await EventTrail.follow(filtered, created.job_id);
      t.equal(created.interactive_profile?.kind, 'resumable', `${id}: resumable profile`);
      const done = (await waitForStatus(c, created.job_id)) as Job;
      t.equal(done.status, 'failed', `${id}: failed`);
      t.equal(done.error?.code, 'SESSION_RESUME_FAILED', `${id}: SESSION_RESUME_FAILED (${done.error?.message ?? ''})`);
      t.equal(done.attempt, 1, `${id}: one turn`);
      t.equal(done.session_handle, null, `${id}: no handle stored`);
      t.equal(done.pending_interaction_id, null, `${id}: no pending id`);
      const calls = await filtered.engineCalls(created.job_id);
      t.equal(calls.length, 1, `${id}: no resume attempted`);
      const engineSession = calls[0]?.session ?? '';
      t.not(engineSession, '', `${id}: the engine had a session...`);
      const attemptDir = join(filtered.runDir(created.job_id), 'attempts', '1');
      const seen = (await readFile(join(attemptDir, 'stdout.log'), 'utf8')) + (await readFile(join(attemptDir, 'stderr.log'), 'utf8'));
      t.notOk(seen.includes(engineSession), `${id}: ...but its id never reached the daemon`);
      t.match(seen, 'Which city should I use?', `${id}: the question itself did`);
      await trail.finished();
      t.notOk(trail.statuses.includes('waiting_user'), `${id}: never waiting_user`);
      t.same(trail.of('input_required'), [], `${id}: no input_required`);
      t.same((await c.request<{ interactions: unknown[] }>('jobs/history', { job_id: created.job_id })).interactions, [], `${id}: no question recorded`);
    }),
  );
  t.match(await c.request('daemon/status'), { slots: { used: 0, queued: 0 } }, 'no slot held');
});
