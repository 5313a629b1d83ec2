import t from 'tap';
import { ANSWER_PROMPT, interact } from '../../clients/interactive.js';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { capture, runSkillctl, type CapturedContext, type Outcome } from '../helpers/skillctl.js';
import { noTerminal, onTerminal, type TerminalOutcome } from '../helpers/terminal.js';

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

/** Runs the built skillctl with SKILLD_SOCKET set (so argv is exactly `args`). */
function ctl(args: string[]): Promise<Outcome> {
  return runSkillctl(args, { ...process.env, SKILLD_SOCKET: daemon.socket });
}

/** An interactive echo-both job that asks "Which city should I use?" (Paris/Rome), once it waits. */
async function waitingJob(engine = 'codex', scenario = 'ask'): Promise<string> {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario } });
  const waiting = await waitForStatus(client, job.job_id, ['waiting_user', 'failed', 'succeeded']);
  if (waiting.status !== 'waiting_user') throw new Error(`job ${job.job_id} is ${waiting.status}: ${JSON.stringify(waiting.error)}`);
  return job.job_id;
}

async function finishedResult(jobId: string): Promise<{ status: string; output: Record<string, unknown> | null }> {
  await waitForStatus(client, jobId);
  return client.request('jobs/result', { job_id: jobId });
}

t.test('pending shows the question with numbered options; --json the RPC result', async (t) => {
  const id = await waitingJob();
  const out = await ctl(['pending', id]);
  t.equal(out.code, 0, out.stderr);
  t.equal(out.stdout, `job ${id} is waiting for a reply to interaction 1 (choose_one):\nWhich city should I use?\n  1) Paris [paris]\n  2) Rome [rome]\n`);
  t.match(out.stderr, `skillctl reply ${id} `);
  const raw = JSON.parse((await ctl(['pending', id, '--json'])).stdout) as unknown;
  t.match(raw, { job_id: id, status: 'waiting_user', pending: { interaction_id: 1, prompt: 'Which city should I use?', options: [{ label: 'Paris' }, { label: 'Rome' }] } });
  await client.request('jobs/cancel', { job_id: id });
  const done = await ctl(['pending', id]);
  t.equal(done.code, 0);
  t.equal(done.stdout, `job ${id} is not waiting (canceled)\n`);
});

t.test('reply without --interaction answers the pending question; the job resumes to success', async (t) => {
  const id = await waitingJob('gemini');
  const out = await ctl(['reply', id, 'Rome,', 'please']);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, new RegExp(`^reply accepted; job ${id} is (queued|running)\\n$`));
  await waitForStatus(client, id);
  const result = await ctl(['result', id]);
  t.equal(result.code, 0, result.stderr);
  t.same(JSON.parse(result.stdout), { greeting: 'hello', reply: 'Rome, please' });
  const again = await ctl(['reply', id, 'more']);
  t.equal(again.code, 1);
  t.match(again.stderr, `skillctl: JOB_NOT_WAITING: job ${id} is not waiting (succeeded)`);
});

t.test('reply picks an option by its number, as the terminal prompt does; a number past a choose_one question is refused, not sent', async (t) => {
  const id = await waitingJob();
  const past = await ctl(['reply', id, '3']);
  t.equal(past.code, 2, 'a usage error');
  t.equal(past.stderr.split('\n').slice(0, 3).join('\n'), 'skillctl: 3 is not one of the options:\n  1) Paris [paris]\n  2) Rome [rome]');
  t.match(await client.request('jobs/get', { job_id: id }), { status: 'waiting_user', pending_interaction_id: 1 }, 'nothing was sent');
  const picked = await ctl(['reply', id, '2']);
  t.equal(picked.code, 0, picked.stderr);
  t.match(await finishedResult(id), { status: 'succeeded', output: { reply: 'rome' } });
});

t.test('reply with the wrong --interaction exits 1 with INTERACTION_STALE', async (t) => {
  const id = await waitingJob();
  const out = await ctl(['reply', id, '--interaction', '7', 'Rome']);
  t.equal(out.code, 1);
  t.match(out.stderr, /^skillctl: INTERACTION_STALE: /);
  t.equal((await client.request<JobView>('jobs/get', { job_id: id })).status, 'waiting_user');
  const right = await ctl(['reply', id, '--interaction', '1', '--json', 'Paris']);
  t.equal(right.code, 0, right.stderr);
  t.match(JSON.parse(right.stdout), { job_id: id, accepted: true });
  t.match(await finishedResult(id), { status: 'succeeded', output: { reply: 'Paris' } });
});

t.test('a reply that looks like options goes after --, verbatim', async (t) => {
  const id = await waitingJob('iflow');
  const out = await ctl(['reply', id, '--', '--help', 'me']);
  t.equal(out.code, 0, out.stderr);
  t.match(await finishedResult(id), { status: 'succeeded', output: { reply: '--help me' } });
  const dash = await waitingJob();
  t.equal((await ctl(['reply', dash, '-', 'yes'])).code, 0);
  t.match(await finishedResult(dash), { output: { reply: '- yes' } });
  const unknown = await ctl(['reply', dash, '-x']);
  t.equal(unknown.code, 2, 'an unknown option without -- is a usage error');
});

t.test('--json-response sends the JSON value; --key makes a retry harmless', async (t) => {
  const id = await waitingJob();
  const args = ['reply', id, '--interaction', '1', '--key', 'k1', '--json-response', '{"city":', '"Rome"}'];
  t.equal((await ctl(args)).code, 0);
  t.equal((await ctl(args)).code, 0, 'same key, same response: accepted again');
  const history = await client.request<{ interactions: Array<{ response: unknown }> }>('jobs/history', { job_id: id });
  t.same(history.interactions[0]?.response, { city: 'Rome' });
  t.match(await finishedResult(id), { status: 'succeeded', output: { reply: '{"city":"Rome"}' } });
  const conflict = await ctl(['reply', id, '--interaction', '1', '--key', 'k1', 'other']);
  t.equal(conflict.code, 1);
  t.match(conflict.stderr, /IDEMPOTENCY_CONFLICT/);
  const bad = await ctl(['reply', id, '--json-response', '{not json']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--json-response: the reply is not valid JSON/);
});

t.test('history lists each round with its prompt, response and resolution mode', async (t) => {
  const id = await waitingJob();
  const open = await ctl(['history', id]);
  t.match(open.stdout, /^#1 {2}asked \S+Z {2}waiting for a reply\n {2}prompt: {3}Which city should I use\?\n {2}response: -\n$/);
  await client.request('jobs/reply', { job_id: id, interaction_id: 1, response: 'rome' });
  await waitForStatus(client, id);
  const out = await ctl(['history', id]);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, /^#1 {2}asked \S+Z {2}replied \S+Z {2}user_reply\n {2}prompt: {3}Which city should I use\?\n {2}response: rome\n$/);
  t.match(JSON.parse((await ctl(['history', id, '--json'])).stdout), { job_id: id, interactions: [{ interaction_id: 1, response: 'rome', resolution_mode: 'user_reply' }] });
});

t.test('run --mode interactive --wait without a terminal stops at the question and exits 0', async (t) => {
  const out = await ctl(['run', 'echo-both', '--engine', 'codex', '--mode', 'interactive', '--input', 'scenario=ask', '--wait']);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, /^job \S+ is waiting for a reply to interaction 1 \(choose_one\):\nWhich city should I use\?\n {2}1\) Paris \[paris\]\n {2}2\) Rome \[rome\]\n$/);
  const json = await ctl(['run', 'echo-both', '-e', 'gemini', '--mode', 'interactive', '-i', 'scenario=ask', '--wait', '--json']);
  t.equal(json.code, 0, json.stderr);
  const view = JSON.parse(json.stdout) as { job_id: string; status: string; pending: { interaction_id: number } };
  t.match(view, { status: 'waiting_user', pending: { interaction_id: 1, kind: 'choose_one' } });
  t.equal((await ctl(['reply', view.job_id, 'Paris'])).code, 0, 'a script can reply to what it printed');
  t.match(await finishedResult(view.job_id), { output: { reply: 'Paris' } });
});

const captureContext = (): CapturedContext => capture(client);

t.test('the interaction loop: an option number picks its value; empty lines ask again; two rounds', async (t) => {
  const questions: string[] = [];
  const answers = ['', '1', 'second answer'];
  const ctx = captureContext();
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask_twice' } });
  const twice = await interact(ctx, job.job_id, (q) => (questions.push(q), Promise.resolve(answers.shift() ?? null)));
  t.equal(twice, 0, ctx.err.join('\n'));
  t.same(questions, ['\nQuestion 1?\nanswer> ', ANSWER_PROMPT, '\nQuestion 2?\nanswer> '], 'no options: "1" is free text');
  t.same(JSON.parse(ctx.out.join('\n')), { greeting: 'hello', reply: 'second answer' });
  const choice = captureContext();
  const id = await waitingJob('gemini');
  const picks = ['7', '1'];
  const asked: string[] = [];
  t.equal(await interact(choice, id, (q) => (asked.push(q), Promise.resolve(picks.shift() ?? null))), 0);
  t.equal(asked[1], `7 is not one of the options:\n  1) Paris [paris]\n  2) Rome [rome]\n${ANSWER_PROMPT}`, 'a number past a choose_one question is asked again, not sent');
  t.match(choice.out.join('\n'), /"reply": "paris"/);
  t.match(choice.err.join('\n'), /reply accepted: "paris"/);
});

t.test('the interaction loop: end of input leaves the job waiting and resolves to 0', async (t) => {
  const ctx = captureContext();
  const id = await waitingJob();
  t.equal(await interact(ctx, id, async () => null), 0);
  t.match(ctx.err.join('\n'), `job ${id} is still waiting for a reply; answer later with: skillctl reply ${id} `);
  t.equal((await client.request<JobView>('jobs/get', { job_id: id })).status, 'waiting_user');
  await client.request('jobs/cancel', { job_id: id });
});

/** Runs skillctl on a pseudo-terminal; types `keys` once the answer prompt shows. */
async function onPty(args: string[], keys: string): Promise<TerminalOutcome> {
  const run = onTerminal(args, { ...process.env, SKILLD_SOCKET: daemon.socket });
  await run.until(ANSWER_PROMPT);
  run.type(keys);
  return run.done;
}

t.test('run --mode interactive on a terminal asks, sends the picked option and prints the result', { skip: noTerminal }, async (t) => {
  const { code, output } = await onPty(['run', 'echo-both', '--engine', 'codex', '--mode', 'interactive', '--input', 'scenario=ask'], '2\n');
  t.equal(code, 0, output);
  t.match(output, /Which city should I use\?\r?\n {2}1\) Paris \[paris\]\r?\n {2}2\) Rome \[rome\]/);
  t.match(output, /reply accepted: "rome"/);
  t.match(output, /"reply": "rome"/);
});

t.test('Ctrl-D at the terminal prompt leaves the job waiting and exits 0', { skip: noTerminal }, async (t) => {
  const { code, output } = await onPty(['run', 'echo-both', '--engine', 'iflow', '--mode', 'interactive', '--input', 'scenario=ask', '--wait'], '\x04');
  t.equal(code, 0, output);
  const id = /job (\S+) is still waiting for a reply; answer later with: skillctl reply \1 /.exec(output)?.[1];
  t.ok(id, output);
  t.equal((await client.request<JobView>('jobs/get', { job_id: id })).status, 'waiting_user');
  await client.request('jobs/cancel', { job_id: id });
});

t.test('help lists pending, reply and history', async (t) => {
  const help = await ctl(['--help']);
  for (const name of ['pending', 'reply', 'history']) t.match(help.stdout, new RegExp(`^  ${name} <job>`, 'm'));
  t.match((await ctl(['help', 'reply'])).stdout, /skillctl reply \S+ -- --help me/, "reply's own help shows a reply that starts with dashes");
});
