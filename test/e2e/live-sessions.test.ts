// Live sessions through the daemon: sticky jobs whose turns run in one engine process over the
// engine's own protocol, with the fakes' protocol modes (which print what the real CLIs print;
// see test/unit/fake-transcripts.test.ts). The real CLIs: test/e2e/real-engines.test.ts.
import { jobProcesses } from '../helpers/job-processes.js';
import t from 'tap';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ANSWER_PROMPT, interact } from '../../clients/interactive.js';
import { capture } from '../helpers/skillctl.js';
import { FIXTURES, TestDaemon, alive, rpcError, waitForFile, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';

/** The engines with a live protocol, each with its fake. */
const LIVE_ENGINES = ['codex', 'gemini', 'iflow', 'claude'] as const;

/** How each protocol says, in the engine's output, that a turn ended interrupted. */
const INTERRUPTED: Record<(typeof LIVE_ENGINES)[number], RegExp> = { codex: /"status":"interrupted"/, gemini: /"stopReason":"cancelled"/, iflow: /"stopReason":"cancelled"/, claude: /"subtype":"error_during_execution"/ };

const engines = Object.fromEntries(LIVE_ENGINES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)], profile: 'sticky_process' }]));
// A grace period no busy machine outlasts: an engine that answers an interrupt always has the time
// to. The daemon `stuck` has a short one, for the engine that answers nothing and is killed.
const daemon = await TestDaemon.start({ config: { max_concurrent: 2, kill_grace_ms: 60_000, engines } });
const stuck = await TestDaemon.start({ config: { max_concurrent: 1, kill_grace_ms: 300, engines } });
t.teardown(() => Promise.all([daemon.cleanup(), stuck.cleanup()]));
const client = await daemon.client();

/** A live job started with `scenario` (on `on`, else the first daemon); its engine's pid, while it runs (a scenario that ends at once, or `pid: false`, gives none). */
async function started(engine: string, scenario: string, extra: Record<string, unknown> = {}, { on = daemon, pid: withPid = true } = {}): Promise<{ jobId: string; pid: number; workspace: string }> {
  const own = on === daemon ? client : await on.client();
  const created = await own.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario, emit: { greeting: 'g' } }, ...extra });
  const workspace = join(on.runDir(created.job_id), 'workspace');
  const pid = scenario === 'exit1' || scenario === 'model_error' || !withPid ? Number.NaN : await on.enginePid(created.job_id);
  return { jobId: created.job_id, pid, workspace };
}

/** A job that waits for an approval (scenario approve, approvals ask), with its pending. */
async function askingOn(engine: string, extra: Record<string, unknown> = {}): Promise<{ jobId: string; pid: number; workspace: string; pending: Record<string, unknown> }> {
  const job = await started(engine, 'approve', { approvals: 'ask', ...extra });
  await waitForStatus(client, job.jobId, ['waiting_user']);
  const { pending } = await client.request<{ pending: Record<string, unknown> }>('jobs/pending', { job_id: job.jobId });
  return { ...job, pending };
}

/** The attempt's raw engine output, as the daemon logged it. */
async function stdoutOf(jobId: string, attempt = 1): Promise<string> {
  return readFile(join(daemon.runDir(jobId), 'attempts', String(attempt), 'stdout.log'), 'utf8');
}

for (const engine of LIVE_ENGINES) {
  t.test(`${engine}: the session id is the job's handle as soon as the engine names it, before the first turn ends`, async (t) => {
    const { jobId } = await started(engine, 'hang');
    let job = await client.request<JobView>('jobs/get', { job_id: jobId });
    for (let tries = 0; job['session_handle'] === null && tries < 3000; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      job = await client.request<JobView>('jobs/get', { job_id: jobId });
    }
    t.equal(job.status, 'running');
    t.match(job['session_handle'], { engine, handle_type: 'session_id', handle_value: /^[0-9a-f-]{36}$|^session-[0-9a-f]{32}$/ });
    await client.request('jobs/cancel', { job_id: jobId });
  });

  t.test(`${engine}: cancel while a turn runs asks the engine to interrupt it; the job is canceled and no process is left`, async (t) => {
    const { jobId, pid } = await started(engine, 'hang');
    const tool = await daemon.enginePid(jobId, 'child-pid');
    t.match(await client.request('jobs/cancel', { job_id: jobId }), { status: 'canceled', accepted: true });
    t.match(await stdoutOf(jobId), INTERRUPTED[engine], 'the engine ended the turn by the protocol');
    await waitUntilGone(pid);
    await waitUntilGone(tool);
    t.match(await client.request('daemon/status'), { slots: { used: 0 } });
  });

  t.test(`${engine}: a turn past hard_timeout_sec is interrupted and the job fails with TIMEOUT`, async (t) => {
    // Its pid is not read: the turn may end before the engine's start is seen.
    const { jobId } = await started(engine, 'hang', { hard_timeout_sec: 1 }, { pid: false });
    t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'TIMEOUT' } });
    t.match(await stdoutOf(jobId), INTERRUPTED[engine]);
    t.same(jobProcesses(jobId), [], 'no process of the job is left');
  });

  t.test(`${engine}: an engine that does not answer the interrupt is stopped after kill_grace_ms`, async (t) => {
    const { jobId, pid } = await started(engine, 'hang', {}, { on: stuck });
    process.kill(pid, 'SIGSTOP'); // it can read nothing, and answer nothing
    t.teardown(() => alive(pid) && process.kill(pid, 'SIGKILL'));
    const own = await stuck.client();
    t.match(await own.request('jobs/cancel', { job_id: jobId }), { status: 'canceled', accepted: true });
    t.notMatch(await readFile(join(stuck.runDir(jobId), 'attempts', '1', 'stdout.log'), 'utf8'), INTERRUPTED[engine]);
    await waitUntilGone(pid);
  });

  t.test(`${engine}: a live process that dies in a turn fails the job with ENGINE_EXIT_NONZERO and its stderr`, async (t) => {
    const { jobId } = await started(engine, 'exit1');
    t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'ENGINE_EXIT_NONZERO', message: /exited with code 1: fatal: engine crashed/ } });
  });

  t.test(`${engine}: a turn the engine reports as failed is ENGINE_TURN_FAILED with its reason`, async (t) => {
    const { jobId } = await started(engine, 'model_error');
    t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'ENGINE_TURN_FAILED', message: /bad request from the model/ } });
    for (const pid of jobProcesses(jobId)) await waitUntilGone(pid);
  });

  t.test(`${engine}: a reply that starts with dashes arrives verbatim, in the same process`, async (t) => {
    const { jobId, pid, workspace } = await started(engine, 'ask');
    await waitForStatus(client, jobId, ['waiting_user']);
    t.ok(alive(pid));
    await client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: '--help me' });
    t.match(await waitForStatus(client, jobId), { status: 'succeeded' });
    t.match(await client.request('jobs/result', { job_id: jobId }), { output: { greeting: 'g', reply: '--help me' } });
    const calls = (await readFile(join(workspace, '.fake-engine', 'calls.ndjson'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { pid: number; prompt: string });
    t.equal(calls.length, 2);
    t.equal(new Set(calls.map((c) => c.pid)).size, 1, 'both turns in one process');
    await waitUntilGone(pid);
  });
}

for (const engine of LIVE_ENGINES) {
  const asking = (extra: Record<string, unknown> = {}): ReturnType<typeof askingOn> => askingOn(engine, extra);

  t.test(`${engine}: approvals "ask": a permission request is a question; allow runs the command within the same turn`, async (t) => {
    const { jobId, pid, workspace, pending } = await asking();
    t.match(pending, { interaction_id: 1, kind: 'approval', prompt: /^Allow the agent to .*touch approved\.txt/, options: [{ label: 'allow', value: 'allow' }, { label: 'deny', value: 'deny' }], ui_hints: { approval: { kind: 'command' } } });
    t.match(await client.request('jobs/get', { job_id: jobId }), { attempt: 1, approvals: 'ask', wait_deadline_at: String }, 'the turn is still the first');
    t.notOk(existsSync(join(workspace, 'approved.txt')), 'nothing ran before the answer');
    await client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: 'allow' });
    t.match(await waitForStatus(client, jobId), { status: 'succeeded', attempt: 1 });
    t.ok(existsSync(join(workspace, 'approved.txt')));
    t.match(await client.request('jobs/result', { job_id: jobId }), { output: { approved: true } });
    t.match(await client.request('jobs/history', { job_id: jobId }), { interactions: [{ interaction_id: 1, kind: 'approval', response: 'allow', resolution_mode: 'user_reply' }] });
    await waitUntilGone(pid);
  });

  t.test(`${engine}: deny refuses the command; a reply that is neither allow nor deny is refused and changes nothing`, async (t) => {
    const { jobId, workspace } = await asking();
    const refused = await rpcError(client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: 'yes' }));
    t.match(refused, { dataCode: 'INVALID_PARAMS', message: /"allow" or "deny"/ });
    t.match(await client.request('jobs/get', { job_id: jobId }), { status: 'waiting_user', pending_interaction_id: 1 });
    await client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: 'deny' });
    t.match(await waitForStatus(client, jobId), { status: 'succeeded' });
    t.notOk(existsSync(join(workspace, 'approved.txt')));
    t.match(await client.request('jobs/result', { job_id: jobId }), { output: { approved: false } });
  });

  t.test(`${engine}: an approval past a non-strict deadline is denied for the user; past a strict one the job fails INTERACTION_WAIT_TIMEOUT`, async (t) => {
    // Waits long enough to be seen waiting on a busy machine before their deadlines pass; the two
    // jobs wait side by side, one slot each.
    const [lenient, strict] = await Promise.all([asking({ session_timeout_sec: 3, interactive_require_user_reply: false }), asking({ session_timeout_sec: 3 })]);
    t.match(await waitForStatus(client, lenient.jobId), { status: 'succeeded' });
    t.match(await client.request('jobs/result', { job_id: lenient.jobId }), { output: { approved: false } });
    t.match(await client.request('jobs/history', { job_id: lenient.jobId }), { interactions: [{ kind: 'approval', resolution_mode: 'auto_decide_timeout' }] });
    t.match(await waitForStatus(client, strict.jobId), { status: 'failed', error: { code: 'INTERACTION_WAIT_TIMEOUT' } });
    await waitUntilGone(strict.pid);
  });

  t.test(`${engine}: cancel while an approval waits leaves no process; SIGKILL then is INTERACTION_PROCESS_LOST`, async (t) => {
    const canceled = await asking();
    t.match(await client.request('jobs/cancel', { job_id: canceled.jobId }), { status: 'canceled', accepted: true });
    await waitUntilGone(canceled.pid);
    const killed = await asking();
    process.kill(killed.pid, 'SIGKILL');
    t.match(await waitForStatus(client, killed.jobId), { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST' } });
    t.match(await client.request('daemon/status'), { slots: { used: 0 } });
  });
}

t.test('skillctl run asks an approval as a yes/no question, and asks again until the answer is one', async (t) => {
  const { jobId, workspace } = await askingOn('codex');
  const questions: string[] = [];
  const answers = ['maybe', 'y'];
  const ctx = capture(client);
  t.equal(await interact(ctx, jobId, (q) => (questions.push(q), Promise.resolve(answers.shift() ?? null))), 0, ctx.err.join('\n'));
  t.match(questions[0], /^\nAllow the agent to .*touch approved\.txt.*\? \[y\/n\]\nanswer> $/s);
  t.equal(questions[1], `"maybe" does not answer an approval: y (allow) or n (deny)\n${ANSWER_PROMPT}`);
  t.match(ctx.err.join('\n'), /reply accepted: "allow"/);
  t.ok(existsSync(join(workspace, 'approved.txt')));
});

t.test('approvals "ask" is refused up front where nothing could ask (an auto job; for a resumable one see approvals.test.ts)', async (t) => {
  const auto = await rpcError(client.request('jobs/create', { skill_id: 'echo-both', engine: 'codex', input: {}, approvals: 'ask' }));
  t.match(auto, { dataCode: 'INVALID_PARAMS', message: /an auto job never waits for a person/ });
  t.match(auto.details, { path: '/approvals' });
  const bogus = await rpcError(client.request('jobs/create', { skill_id: 'echo-both', engine: 'codex', input: {}, approvals: 'sometimes' }));
  t.equal(bogus.dataCode, 'INVALID_PARAMS');
});
