// skillctl on a terminal: the status line, Ctrl-C, attach, colour; and what changes when the
// output is not a terminal or NO_COLOR is set. Each test drives the built skillctl on a real
// pseudo-terminal (util-linux `script`) against a daemon running the fake engines.
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ANSWER_PROMPT } from '../../clients/interactive.js';
import { CLEAR_LINE } from '../../clients/status-line.js';
import { RELEASE_FILE, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';
import { colourTerminalEnv, noTerminal, onTerminal, screenLines, type TerminalRun } from '../helpers/terminal.js';

const daemon = await TestDaemon.start({ config: { kill_grace_ms: 300 } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();

/** skillctl on a terminal that allows colour, unless `extra` says otherwise (NO_COLOR). */
function onPty(args: string[], extra: Record<string, string> = {}): TerminalRun {
  return onTerminal(args, colourTerminalEnv({ ...process.env, SKILLD_SOCKET: daemon.socket }, extra));
}

const SGR = /\x1b\[[0-9;]*m/g;
const plain = (text: string): string => text.replace(SGR, '');
/** A status line as drawn: cleared, then `<status> <elapsed>`. */
const statusLine = (status: string): RegExp => new RegExp(`${CLEAR_LINE.replace('[', '\\[')}${status} \\d+[smhd]`);
/** Any status line left on the screen. */
const LEFTOVER = /^(queued|running|waiting_user|succeeded|failed|canceled) \d+[smhd]/;

t.test('run --wait on a terminal: a status line with the status, the time and the agent message, gone at the end', { skip: noTerminal }, async (t) => {
  const run = onPty(['run', 'echo-auto', '--engine', 'codex', '--input', 'scenario=ok', '--input', `release_file=${RELEASE_FILE}`, '--wait']);
  await run.until((text: string) => statusLine('running').test(plain(text)));
  const { jobs } = await client.request<{ jobs: JobView[] }>('jobs/list', { status: 'running' });
  await daemon.release(jobs[0]?.job_id ?? 'none running');
  const { code, output } = await run.done;
  t.equal(code, 0, output);
  const shown = plain(output);
  t.match(shown, statusLine('running'), 'the status line is drawn in place');
  t.match(shown, /running (<1s|\d+s) {2}Done\. ```json \{"greeting": "hello", "__SKILL_DONE__": true\} ```/, "the agent's latest message as text on one line, not NDJSON");
  t.notMatch(shown, /"type":"item\.completed"/, 'no raw NDJSON');
  const screen = screenLines(output).filter((line) => line !== '');
  t.same(screen.filter((line) => LEFTOVER.test(line)), [], 'no status line is left on the screen');
  t.same(screen.slice(-3), ['{', '  "greeting": "hello"', '}'], 'the result is the last thing shown');
});

t.test('Ctrl-C during run --wait leaves the job running, says how to come back, exit 130', { skip: noTerminal }, async (t) => {
  const run = onPty(['run', 'echo-auto', '--engine', 'codex', '--input', 'scenario=hang', '--wait']);
  await run.until((text: string) => statusLine('running').test(plain(text)));
  run.type('\x03');
  const { code, output } = await run.done;
  t.equal(code, 130, output);
  const id = /job (\S+) is still running; come back with: skillctl attach \1/.exec(plain(output))?.[1];
  t.ok(id, output);
  t.match(plain(output), `to stop it: skillctl cancel ${id}`);
  t.same(screenLines(output).filter((line) => LEFTOVER.test(line)), [], 'the status line was cleared');
  t.equal((await client.request<JobView>('jobs/get', { job_id: id })).status, 'running', 'the job goes on');
  await client.request('jobs/cancel', { job_id: id });
});

t.test('attach to a waiting job shows the question, takes an option number, follows to the end', { skip: noTerminal }, async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  const run = onPty(['attach', job.job_id]);
  await run.until(ANSWER_PROMPT);
  run.type('2\n');
  const { code, output } = await run.done;
  t.equal(code, 0, output);
  const shown = plain(output);
  t.match(shown, `job ${job.job_id} waiting_user`, 'where the job stands');
  t.match(shown, /Which city should I use\?\r?\n {2}1\) Paris \[paris\]\r?\n {2}2\) Rome \[rome\]/);
  t.match(shown, /reply accepted: "rome"/);
  t.match(shown, /"reply": "rome"/, 'the result, as run --wait prints it');
  t.match(await client.request('jobs/result', { job_id: job.job_id }), { status: 'succeeded', output: { reply: 'rome' } });
  t.same(screenLines(output).filter((line) => LEFTOVER.test(line)), []);
  const again = await runSkillctl(['attach', job.job_id], { ...process.env, SKILLD_SOCKET: daemon.socket });
  t.equal(again.code, 0, again.stderr);
  t.same(JSON.parse(again.stdout), { greeting: 'hello', reply: 'rome' }, 'a finished job: attach prints its result');
});

t.test('attach without a terminal stops at the question, as run --wait does', async (t) => {
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ask' } });
  await waitForStatus(client, job.job_id, ['waiting_user']);
  const out = await runSkillctl(['attach', job.job_id], { ...process.env, SKILLD_SOCKET: daemon.socket });
  t.equal(out.code, 0, out.stderr);
  t.equal(out.stdout, `job ${job.job_id} is waiting for a reply to interaction 1 (choose_one):\nWhich city should I use?\n  1) Paris [paris]\n  2) Rome [rome]\n`);
  t.match(out.stderr, `job ${job.job_id} waiting_user\nreply with: skillctl reply ${job.job_id} `);
  const json = await runSkillctl(['attach', job.job_id, '--json'], { ...process.env, SKILLD_SOCKET: daemon.socket });
  t.match(JSON.parse(json.stdout), { job_id: job.job_id, status: 'waiting_user', pending: { interaction_id: 1 } });
  const missing = await runSkillctl(['attach', 'no-such-job'], { ...process.env, SKILLD_SOCKET: daemon.socket });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /JOB_NOT_FOUND/);
  await client.request('jobs/cancel', { job_id: job.job_id });
});

t.test('colour: statuses coloured on a terminal, plain with NO_COLOR and when piped; the table stays aligned', { skip: noTerminal }, async (t) => {
  const failing = ['run', 'echo-auto', '--engine', 'gemini', '--input', 'scenario=exit1', '--wait'];
  const coloured = await onPty(failing).done;
  t.equal(coloured.code, 1, coloured.output);
  t.match(coloured.output, /job \S+ \x1b\[34mqueued\x1b\[0m/, 'the status note');
  t.match(coloured.output, /skillctl: \x1b\[31mENGINE_EXIT_NONZERO: [^\x1b]*\x1b\[0m/, 'the error line, red');
  const table = await onPty(['jobs', '--skill', 'echo-auto', '--limit', '5']).done;
  t.equal(table.code, 0, table.output);
  t.match(table.output, /\x1b\[31mfailed\x1b\[0m/);
  const rows = screenLines(table.output).filter((line) => line !== '');
  const column = rows[0]?.indexOf('STATUS') ?? -1;
  t.ok(column > 0, rows.join('\n'));
  for (const row of rows.slice(1)) t.match(row.slice(column), /^(succeeded|failed|canceled|running|queued) +(just now|\d+s ago|\d+ min ago|\d+ h ago) /, `aligned: ${row}`);

  const noColour = await onPty(failing, { NO_COLOR: '1' }).done;
  t.equal(noColour.code, 1);
  t.notMatch(noColour.output, SGR, 'NO_COLOR: no colour codes');
  t.match(noColour.output, /skillctl: ENGINE_EXIT_NONZERO: /);
  t.notMatch((await onPty(['jobs', '--limit', '5'], { NO_COLOR: '1' }).done).output, SGR);

  const env = colourTerminalEnv({ ...process.env, SKILLD_SOCKET: daemon.socket });
  const piped = await runSkillctl(failing, env);
  t.equal(piped.code, 1);
  t.notMatch(piped.stdout + piped.stderr, /\x1b/, 'piped: neither colour nor a status line');
  t.match(piped.stderr, /^job \S+ queued\nskillctl: ENGINE_EXIT_NONZERO: /);
  t.notMatch((await runSkillctl(['jobs', '--limit', '5'], env)).stdout, /\x1b/);
  const ok = await runSkillctl(['run', 'echo-auto', '--engine', 'codex', '--input', 'scenario=ok', '--wait'], env);
  t.same(JSON.parse(ok.stdout), { greeting: 'hello' }, 'stdout holds the result alone');
  t.notMatch(ok.stdout + ok.stderr, /\x1b/);
});
