// What an engine prints never acts on the user's terminal: skillctl shows its control characters
// (\x1b, \x0d, \x9b, \u202e) wherever it prints engine text for people, piped and on a terminal,
// and escapes them as JSON does in --raw and --json. The fake engines' `hostile` scenarios print
// a line of such controls on stderr, in the agent's message and in a question.
import t from 'tap';
import { ANSWER_PROMPT } from '../../clients/interactive.js';
import { TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl, type Outcome } from '../helpers/skillctl.js';
import { colourTerminalEnv, noTerminal, onTerminal, type TerminalRun } from '../helpers/terminal.js';

const daemon = await TestDaemon.start();
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

/** The line the hostile scenarios print, as the engine printed it (test/fixtures/fake-engine-core.mjs). */
const HOSTILE = 'clear\x1b[2J\x1b[H title\x1b]0;owned\x07 clip\x1b]52;c;cm0gLXJmIH4K\x07 hide\x1b[8msecret\x1b[28m over\rcr c1\x9b31m del\x7f bidi\u202eevil\u202c\tend';
/** The same line as skillctl shows it to people. */
const SHOWN = 'clear\\x1b[2J\\x1b[H title\\x1b]0;owned\\x07 clip\\x1b]52;c;cm0gLXJmIH4K\\x07 hide\\x1b[8msecret\\x1b[28m over\\x0dcr c1\\x9b31m del\\x7f bidi\\u202eevil\\u202c\tend';
/** The same line with its controls escaped as JSON escapes them: --raw. */
const ESCAPED = 'clear\\u001b[2J\\u001b[H title\\u001b]0;owned\\u0007 clip\\u001b]52;c;cm0gLXJmIH4K\\u0007 hide\\u001b[8msecret\\u001b[28m over\\u000dcr c1\\u009b31m del\\u007f bidi\\u202eevil\\u202c\tend';
/** The hostile_ask question and its first option, as skillctl shows them. */
const QUESTION_SHOWN = 'Which city\\x1b[2J\\x1b]0;owned\\x07 should I\\x0d use \\x9b31m\\u202eevil\\u202c?';
const OPTION_SHOWN = '  1) Paris\\x1b[8m hidden\\x1b[28m [paris\\x7f]';

/** Any character a terminal would act on, but the line feed and the tab (and a carriage return that ends a line: a terminal writes those). */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/;
/** The engine's own sequences, each as it printed them: none may reach a terminal whole. */
const ENGINE_SEQUENCES = ['\x1b[2J', '\x1b[H', '\x1b]0;owned', '\x1b]52;', '\x1b[8m', 'over\rcr', 'I\r use', '\x9b', '\x7f', '\u202e'];

const env = { ...process.env, SKILLD_SOCKET: daemon.socket };
const ctl = (args: string[]): Promise<Outcome> => runSkillctl(args, env);
/** skillctl on a terminal without colour: anything that acts on the terminal came from the engine. */
const onPty = (args: string[]): TerminalRun => onTerminal(args, colourTerminalEnv(env, { NO_COLOR: '1' }));

async function finishedJob(engine: string, scenario: string): Promise<string> {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine, input: { scenario } });
  await waitForStatus(client, job.job_id);
  return job.job_id;
}

const iflow = await finishedJob('iflow', 'hostile');
const codex = await finishedJob('codex', 'hostile');
const failed = await finishedJob('gemini', 'hostile_exit1');

t.test('logs: the agent message shows its controls as \\x1b, \\x0d, \\x9b, \\u202e; line feeds and tabs stay', async (t) => {
  for (const id of [iflow, codex]) {
    const logs = await ctl(['logs', id]);
    t.equal(logs.code, 0, logs.stderr);
    t.equal(logs.stdout.split('\n')[0], SHOWN, 'the line, every control shown');
    t.match(logs.stdout, /^Done\.\n```json\n/m, 'the lines after it as they were');
    t.notMatch(logs.stdout, CONTROL, 'no control character is printed');
  }
  const follow = await ctl(['logs', iflow, '-f']);
  t.equal(follow.stdout, (await ctl(['logs', iflow])).stdout, '-f shows the same');
});

t.test("logs --stderr: the engine's stderr shows its controls", async (t) => {
  const stderr = await ctl(['logs', iflow, '--stderr']);
  t.equal(stderr.code, 0, stderr.stderr);
  t.equal(stderr.stdout.split('\n')[0], SHOWN);
  t.match(stderr.stdout, /^<Execution Info>$/m, "the lines after it as iFlow wrote them");
  t.notMatch(stderr.stdout, CONTROL);
  const failing = await ctl(['logs', failed, '--stderr']);
  t.equal(failing.stdout, `${SHOWN}\nfatal: engine crashed\n`);
});

t.test("logs --raw: the engine's bytes with their controls escaped as JSON escapes them, never dropped", async (t) => {
  const plain = await ctl(['logs', iflow, '--raw']);
  t.equal(plain.code, 0, plain.stderr);
  t.equal(plain.stdout.split('\n')[0], ESCAPED, 'iFlow prints text: its controls become \\u001b and the like');
  t.notMatch(plain.stdout, CONTROL);
  const stderr = await ctl(['logs', iflow, '--stderr', '--raw']);
  t.equal(stderr.stdout.split('\n')[0], ESCAPED, '--stderr --raw: the same bytes, escaped');
  const ndjson = await ctl(['logs', codex, '--raw']);
  t.notMatch(ndjson.stdout, CONTROL, 'not even DEL, C1 or a bidi override, which JSON leaves as they are');
  const events = ndjson.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { item?: { type: string; text: string } });
  const said = events.find((event) => event.item?.type === 'agent_message')?.item?.text ?? '';
  t.equal(said.split('\n')[0], HOSTILE, "Codex's NDJSON stays valid JSON that means what the engine said");
});

t.test('help logs says how control characters are shown, and that --raw and --json escape them', async (t) => {
  const help = await ctl(['help', 'logs']);
  t.equal(help.code, 0, help.stderr);
  const text = help.stdout.replace(/\s+/g, ' ');
  t.match(text, 'every other control character is shown as text instead, \\x1b for ESC');
  t.match(text, '--raw and --json escape them as JSON does (\\u001b): nothing is dropped');
});

t.test('logs --json: each jobs/logs answer on a line of its own, valid JSON with the controls escaped', async (t) => {
  const out = await ctl(['logs', iflow, '--stderr', '--json']);
  t.equal(out.code, 0, out.stderr);
  t.notMatch(out.stdout, CONTROL);
  const chunks = out.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { data: string; eof: boolean });
  t.equal(chunks.map((chunk) => chunk.data).join('').split('\n')[0], HOSTILE, 'the data as the engine wrote it');
  t.equal(chunks.at(-1)?.eof, true);
});

t.test("watch: each event's engine text shows its controls; --json lines stay valid JSON with them escaped", async (t) => {
  const watch = await ctl(['watch', iflow]);
  t.equal(watch.code, 0, watch.stderr);
  t.match(watch.stdout, ` message ${SHOWN.slice(0, 60)}`, 'the message event, cut to a readable length');
  t.notMatch(watch.stdout, CONTROL);
  const json = await ctl(['watch', failed, '--json']);
  t.notMatch(json.stdout, CONTROL);
  const events = json.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string; data: { error?: { message: string } } });
  t.match(events.at(-1), { type: 'finished', data: { error: { message: `engine exited with code 1: ${HOSTILE} | fatal: engine crashed` } } });
  const shownFailure = await ctl(['watch', failed]);
  t.match(shownFailure.stdout, ` finished failed ENGINE_EXIT_NONZERO: engine exited with code 1: ${SHOWN} | fatal: engine crashed`);
  t.notMatch(shownFailure.stdout, CONTROL);
});

t.test("show, result and run --wait: an error that quotes the engine's stderr shows its controls", async (t) => {
  const show = await ctl(['show', failed]);
  t.equal(show.code, 0, show.stderr);
  t.match(show.stdout, `ENGINE_EXIT_NONZERO: engine exited with code 1: ${SHOWN} | fatal: engine crashed`);
  t.notMatch(show.stdout, CONTROL);
  const json = await ctl(['show', failed, '--json']);
  t.notMatch(json.stdout, CONTROL);
  t.match(JSON.parse(json.stdout), { error: { message: `engine exited with code 1: ${HOSTILE} | fatal: engine crashed` } });
  const result = await ctl(['result', failed]);
  t.equal(result.code, 1);
  t.equal(result.stderr, `skillctl: ENGINE_EXIT_NONZERO: engine exited with code 1: ${SHOWN} | fatal: engine crashed\n`);
  const run = await ctl(['run', 'echo-auto', '--engine', 'codex', '--input', 'scenario=hostile_exit1', '--wait']);
  t.equal(run.code, 1);
  t.match(run.stderr, `skillctl: ENGINE_EXIT_NONZERO: engine exited with code 1: ${SHOWN}`);
  t.notMatch(run.stderr, CONTROL);
});

t.test("result: the output's strings come out as JSON with every control escaped", async (t) => {
  const result = await ctl(['result', iflow]);
  t.equal(result.code, 0, result.stderr);
  t.notMatch(result.stdout, CONTROL);
  t.same(JSON.parse(result.stdout), { greeting: 'hello', text: HOSTILE });
  const json = await ctl(['result', iflow, '--json']);
  t.notMatch(json.stdout, CONTROL);
  t.match(JSON.parse(json.stdout), { status: 'succeeded', output: { text: HOSTILE } });
});

t.test('pending and history: the question and its options show their controls', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'hostile_ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  const pending = await ctl(['pending', job.job_id]);
  t.equal(pending.code, 0, pending.stderr);
  t.equal(pending.stdout, `job ${job.job_id} is waiting for a reply to interaction 1 (choose_one):\n${QUESTION_SHOWN}\n${OPTION_SHOWN}\n  2) Rome [rome]\n`);
  const json = await ctl(['pending', job.job_id, '--json']);
  t.notMatch(json.stdout, CONTROL);
  t.match(JSON.parse(json.stdout), { pending: { options: [{ label: 'Paris\x1b[8m hidden\x1b[28m', value: 'paris\x7f' }] } });
  const reply = await ctl(['reply', job.job_id, '1']);
  t.equal(reply.code, 0, reply.stderr);
  await waitForStatus(client, job.job_id);
  const history = await ctl(['history', job.job_id]);
  t.equal(history.code, 0, history.stderr);
  t.match(history.stdout, `  prompt:   ${QUESTION_SHOWN}\n  response: paris\\x7f`);
  t.notMatch(history.stdout, CONTROL);
  t.notMatch((await ctl(['history', job.job_id, '--json'])).stdout, CONTROL);
});

t.test("on a terminal: logs, logs --stderr, watch and show never let the engine's sequences through", { skip: noTerminal }, async (t) => {
  for (const args of [['logs', iflow], ['logs', iflow, '--stderr'], ['logs', codex, '--raw'], ['watch', iflow], ['show', failed], ['result', iflow]]) {
    const { code, output } = await onPty(args).done;
    t.equal(code, 0, output);
    t.match(output, args[0] === 'result' || args[2] === '--raw' ? '\\u001b[2J' : '\\x1b[2J', `${args.join(' ')}: the controls are shown`);
    t.notMatch(output, CONTROL, `${args.join(' ')}: nothing acts on the terminal`);
  }
});

t.test('on a terminal: attach asks the question with its controls shown, and the status line shows the message the same way', { skip: noTerminal }, async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'iflow', execution_mode: 'interactive', input: { scenario: 'hostile_ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  const run = onPty(['attach', job.job_id]);
  await run.until(ANSWER_PROMPT);
  t.match(run.output, `${QUESTION_SHOWN}\r\n${OPTION_SHOWN}\r\n`);
  run.type('1\n');
  const { code, output } = await run.done;
  t.equal(code, 0, output);
  t.match(output, 'reply accepted: "paris\\x7f"');
  t.same(
    ENGINE_SEQUENCES.filter((sequence) => output.includes(sequence)),
    [],
    "none of the engine's sequences reached the terminal (skillctl's own, the status line and the prompt, may)",
  );
  t.match(await client.request('jobs/result', { job_id: job.job_id }), { status: 'succeeded', output: { reply: 'paris\x7f', text: HOSTILE } });
  const history = await onPty(['history', job.job_id]).done;
  t.match(history.output, `  prompt:   ${QUESTION_SHOWN}\r\n  response: paris\\x7f`);
  t.notMatch(history.output, CONTROL, 'history on a terminal: nothing acts on it');
});
