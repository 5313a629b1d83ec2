import t, { type Test } from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listProcesses } from '../../daemon/process/proc.js';
import { compileSchema } from '../../daemon/skills/json-schema.js';
import { Cleanup } from '../../demo/cleanup.js';
import { SKILL_SCRIPTS, demoModel } from '../../demo/conversation/script.js';
import type { SkillTurn } from '../../demo/conversation/turn.js';
import { startRig } from '../../demo/rig.js';
import { AUTO_REPLIES, DESTINATION } from '../../demo/walkthrough.js';
import { RpcClient } from '../../rpc/client.js';
import { realEngineBins } from '../fixtures/engine-homes.js';
import { alive, ROOT, waitForStatus, type JobView } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';

/**
 * `npm run demo`: the built demo (dist/demo/main.js) run as npm runs it, with the real daemon, the
 * real Codex CLI and the scripted model; and the scripted conversations of the bundled skills.
 */
const DEMO = join(ROOT, 'dist', 'demo', 'main.js');
const noCodex = realEngineBins(join(ROOT, 'node_modules')).codex === null ? 'the real Codex CLI is not installed in node_modules (npm ci installs it as a dev dependency); the demo did NOT run' : false;
// Each demo run starts the daemon and about six real Codex turns.
t.setTimeout(300_000);

interface DemoRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/demo/main.js` as `npm run demo` does, stdin not a terminal; `watch` sees the output as it comes. */
function runDemo(command: string[] = [process.execPath, DEMO], watch: (output: string, child: ReturnType<typeof spawn>) => void = () => undefined, env: NodeJS.ProcessEnv = {}): Promise<DemoRun> {
  const child = spawn(command[0] as string, command.slice(1), { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    watch(stdout, child);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The daemon's pid and the demo's folder, as the demo printed them. */
function started(output: string): { pid: number; dir: string } {
  const pid = Number(/skilld +pid (\d+),/.exec(output)?.[1]);
  const dir = /folder +(\S+) /.exec(output)?.[1] ?? '';
  return { pid, dir };
}

/** Processes that still have anything to do with `dir`: working in it, started with it in their command line or environment. */
function leftovers(dir: string): number[] {
  const mentions = (path: string): boolean => {
    try {
      return readFileSync(path, 'utf8').includes(dir);
    } catch {
      return false;
    }
  };
  return listProcesses()
    .map((p) => p.pid)
    .filter((pid) => {
      if (pid === process.pid) return false;
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // gone, or not ours to read
      }
      return cwd.startsWith(dir) || mentions(`/proc/${pid}/cmdline`) || mentions(`/proc/${pid}/environ`);
    });
}

function assertCleanedUp(t: Test, output: string): void {
  const { pid, dir } = started(output);
  t.ok(pid > 0 && /\/skilld-demo-\w+$/.test(dir), `the demo printed the daemon's pid and its folder: ${pid} ${dir}`);
  t.notOk(alive(pid), 'the daemon is gone');
  t.notOk(existsSync(dir), 'the folder is removed');
  t.same(leftovers(dir), [], 'no daemon, Codex or tool process of the demo is left');
  t.match(output, `Stopped skilld (pid ${pid}) and the model server; removed ${dir}.`);
}

/** The JSON document skillctl printed after `$ <command>`. */
function printedJson(output: string, command: RegExp): Record<string, unknown> {
  const at = output.search(command);
  const start = output.indexOf('\n{', at);
  const end = output.indexOf('\n}\n', start);
  return JSON.parse(output.slice(start + 1, end + 2)) as Record<string, unknown>;
}

t.test('npm run demo without a terminal: an auto run and an interactive run answered by skillctl reply, then everything is gone', { skip: noCodex }, async (t) => {
  const run = await runDemo();
  if (!t.equal(run.code, 0, 'the demo exits 0')) t.comment(run.stdout, run.stderr);
  const out = run.stdout;
  t.match(out, /^\$ skillctl run summarize-text --engine codex --input text='The city council met on Tuesday[^\n]*' --wait$/m, 'each command is printed as a person would type it');
  const summary = printedJson(out, /\$ skillctl run summarize-text/);
  t.match(summary, { summary: /^The city council met on Tuesday to decide the future of the bike lanes/, key_points: ['The city council met on Tuesday to decide the future of the bike lanes on Main Street.', 'Members voted 7 to 2 to build protected lanes along the whole street by next spring.'] });
  t.match(out, `$ skillctl run plan-trip --engine codex --mode interactive --input destination=${DESTINATION} --wait`);
  t.match(out, /is waiting for a reply to interaction 1 \(open_text\):\nHow many days will you spend in Lisbon/);
  t.match(out, /^\$ skillctl reply job-\S+ 'Three days, museums and food'$/m, 'the automatic reply goes through skillctl reply');
  t.match(out, /^\$ skillctl pending job-\S+\njob \S+ is waiting for a reply to interaction 2 \(choose_one\):\nWhat budget should I plan for\?/m);
  t.match(out, /^\$ skillctl reply job-\S+ 2$/m, 'an option is picked by its number');
  const plan = printedJson(out, /\$ skillctl result job-/);
  t.match(plan, { destination: 'Lisbon', notes: `Your answers: "${AUTO_REPLIES.text}"; "moderate".` }, 'the plan is built from the replies');
  t.equal((plan['days'] as unknown[]).length, 3, '"Three days"');
  t.match(plan['days'], [{ day: 1, morning: /museum/ }, { day: 2, morning: /market/ }]);
  t.match(out, /^\$ skillctl jobs\n.*\n.*plan-trip +codex +interactive +succeeded/m);
  t.match(out, /^\$ skillctl history job-\S+\n#1 .*user_reply\n.*\n {2}response: Three days, museums and food$/m);
  const recap = out.slice(out.indexOf('== Recap'));
  for (const line of ['skillctl run plan-trip --engine codex --mode interactive --input destination=Lisbon --wait', "skillctl reply <job> 'Three days, museums and food'", 'skillctl reply <job> 2', 'skillctl result <job>', 'skillctl history <job>']) {
    t.match(recap, `\n  ${line}\n`, `the recap repeats: ${line}`);
  }
  t.match(recap, 'docs/engines.md, "Pointing a real install at a model provider"');
  assertCleanedUp(t, out);
});

const hasScript = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v script'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const noTerminal = noCodex || (hasScript ? false : 'util-linux `script` is not installed: no pseudo-terminal to run the demo on; the terminal walk-through did NOT run');

/** What a terminal shows of `raw`: escape sequences dropped, and of each line what its last carriage return left (skillctl's status line redraws in place). */
function screenText(raw: string): string {
  const lines = raw.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').split('\n');
  return lines.map((line) => line.split('\r').filter((part) => part !== '').pop() ?? '').join('\n');
}

t.test('npm run demo on a terminal: the person answers at skillctl\'s own prompt', { skip: noTerminal }, async (t) => {
  const answers = ['Four days, walking and nightlife, no museums\n', '1\n'];
  const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
  const command = ['script', '-qfec', `${quote(process.execPath)} ${quote(DEMO)}`, '/dev/null'];
  let asked = 0;
  const run = await runDemo(command, (output, child) => {
    const prompts = output.split('answer> ').length - 1;
    if (prompts > asked && asked < answers.length) child.stdin?.write(answers[asked++] as string);
  }, { NO_COLOR: '1' });
  const out = screenText(run.stdout);
  if (!t.equal(run.code, 0, 'the demo exits 0')) t.comment(out, run.stderr);
  t.equal(asked, 2, 'two questions were asked at the prompt');
  t.match(out, '$ skillctl run plan-trip --engine codex --mode interactive --input destination=Lisbon\n');
  t.match(out, 'reply accepted: "Four days, walking and nightlife, no museums"');
  t.match(out, 'reply accepted: "shoestring"');
  t.notMatch(out, '$ skillctl reply', 'nothing was answered for the person');
  const plan = printedJson(out, /reply accepted: "shoestring"/);
  t.equal((plan['days'] as unknown[]).length, 4, '"Four days"');
  t.notMatch(JSON.stringify(plan['days']), /museum/i, '"no museums"');
  t.match(plan['notes'], 'Kept clear of museums, as you asked.');
  assertCleanedUp(t, out);
});

t.test('Ctrl-C (SIGINT) in the middle: the demo stops the daemon and removes its folder', { skip: noCodex }, async (t) => {
  // A TMPDIR too long for a socket path (107 bytes) must not truncate it: the demo then works under /tmp.
  const longTmp = await mkdtemp(join(tmpdir(), `demo-${'x'.repeat(100)}-`));
  t.teardown(() => rm(longTmp, { recursive: true, force: true }));
  let sent = false;
  const run = await runDemo(undefined, (output, child) => {
    if (sent || !output.includes('\n$ skillctl ')) return;
    sent = true;
    child.kill('SIGINT');
  }, { TMPDIR: longTmp });
  t.match(started(run.stdout).dir, /^\/tmp\/skilld-demo-/, 'a TMPDIR too long for the socket falls back to /tmp');
  t.ok(sent, 'SIGINT was sent once the first command line was printed');
  if (!t.equal(run.code, 130, 'the demo exits 130, as after Ctrl-C')) t.comment(run.stdout, run.stderr);
  t.match(run.stdout, 'SIGINT: stopping the demo');
  t.notMatch(run.stdout, '== Recap');
  assertCleanedUp(t, run.stdout);
});

t.test('npm run demo -- --keep: after the walk-through the daemon, Codex and the model server keep running for the printed commands; Ctrl-C then removes everything (exit 0)', { skip: noCodex }, async (t) => {
  let tried: Promise<{ code: number; stdout: string; stderr: string }> | null = null;
  const run = await runDemo([process.execPath, DEMO, '--keep', '--yes'], (output, child) => {
    if (tried !== null || !output.includes('Press Ctrl-C here to stop them')) return;
    const socket = /^ {2}export SKILLD_SOCKET=(\S+)$/m.exec(output)?.[1] ?? '';
    // What a person types next in another terminal, as printed (the alias is the built skillctl).
    tried = runSkillctl(['run', 'summarize-text', '--engine', 'codex', '--input', 'text=Keep playing after the demo. The daemon is still there. It answers from the scripted model.', '--wait'], { ...process.env, SKILLD_SOCKET: socket })
      .finally(() => child.kill('SIGINT'));
  });
  t.ok(tried !== null, 'the demo printed what to do next and kept running');
  const own = await (tried as unknown as Promise<{ code: number; stdout: string; stderr: string }>);
  t.equal(own.code, 0, own.stderr);
  t.match(JSON.parse(own.stdout), { summary: /^Keep playing after the demo\./ }, 'a run of their own, on the real Codex CLI and the scripted model');
  t.match(run.stdout, /== Kept running\n/);
  t.match(run.stdout, /^ {2}alias skillctl='node \S+\/dist\/clients\/skillctl\.js' /m, 'how to have skillctl at hand');
  t.match(run.stdout, /^ {2}skillctl run plan-trip --engine codex --mode interactive --input destination=Porto$/m);
  if (!t.equal(run.code, 0, 'Ctrl-C is how a kept demo ends: exit 0')) t.comment(run.stdout, run.stderr);
  assertCleanedUp(t, run.stdout);
});

t.test('--help prints the usage and starts nothing; an unknown option is a usage error (exit 2)', async (t) => {
  const help = await runDemo([process.execPath, DEMO, '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^usage: npm run demo \[-- --yes\] \[-- --keep\]\n/);
  t.notMatch(help.stdout, 'skilld  ');
  const bad = await runDemo([process.execPath, DEMO, '--bogus']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^demo: Unknown option '--bogus'\nusage: npm run demo/);
});

t.test('write-commit-message on the real Codex CLI with the demo\'s model: reads the diff, asks in an interactive run, saves COMMIT_MSG.txt', { skip: noCodex }, async (t) => {
  const repo = await mkdtemp(join(tmpdir(), 'demo-repo-'));
  // The engines' user reads it (a daemon that runs as root runs them as another: docs/sandbox.md).
  await chmod(repo, 0o755);
  const cleanup = new Cleanup();
  t.teardown(async () => {
    await cleanup.run();
    await rm(repo, { recursive: true, force: true });
  });
  const git = (...args: string[]): string => execFileSync('git', ['-C', repo, '-c', 'user.name=demo', '-c', 'user.email=demo@example.invalid', ...args], { encoding: 'utf8' });
  git('init', '-q');
  await writeFile(join(repo, 'util.js'), 'export const a = 1;\n');
  git('add', '.');
  git('commit', '-qm', 'init');
  await writeFile(join(repo, 'util.js'), 'export const a = 1;\nexport function greet(name) {\n  return `Hello, ${name}`;\n}\n');
  git('add', 'util.js');
  const rig = await startRig(demoModel, (stop) => cleanup.add(stop));
  const client = await RpcClient.connect(rig.daemon.socket);
  cleanup.add(async () => client.close());

  const auto = await client.request<JobView>('jobs/create', { skill_id: 'write-commit-message', engine: 'codex', input: { repository: repo }, parameter: { style: 'conventional' } });
  t.equal((await waitForStatus(client, auto.job_id)).status, 'succeeded');
  const result = await client.request<{ output: { subject: string; body: string }; artifacts: string[] }>('jobs/result', { job_id: auto.job_id });
  t.equal(result.output.subject, 'feat: add greet() to util.js', 'the subject comes from the staged diff');
  t.match(result.output.body, '- util.js: modified, +3 -0');
  t.equal(result.artifacts.length, 1);
  t.equal(await readFile(result.artifacts[0] as string, 'utf8'), `${result.output.subject}\n\n${result.output.body}\n`, 'the message was saved by a command the model ran');

  const asking = await client.request<JobView>('jobs/create', { skill_id: 'write-commit-message', engine: 'codex', execution_mode: 'interactive', input: { repository: repo }, parameter: { style: 'plain' } });
  t.equal((await waitForStatus(client, asking.job_id, ['waiting_user', 'failed', 'succeeded'])).status, 'waiting_user');
  t.match(await client.request('jobs/pending', { job_id: asking.job_id }), { pending: { prompt: /^What is the purpose of this change\?/ } });
  await client.request('jobs/reply', { job_id: asking.job_id, interaction_id: 1, response: 'so the home page can greet visitors by name' });
  t.equal((await waitForStatus(client, asking.job_id)).status, 'succeeded');
  t.match(await client.request('jobs/result', { job_id: asking.job_id }), { output: { subject: 'Add greet() to util.js', body: /^So the home page can greet visitors by name\.\n/ } });
});

/** A turn of `skill` as the daemon's first prompt and the given history make it. */
function turnOf(skillId: string, input: Record<string, unknown>, history: Partial<SkillTurn> = {}): SkillTurn {
  return { skillId, skillMdPath: '/run/SKILL.md', input, parameter: {}, commands: [], questions: [], replies: [], answered: 0, ...history };
}

t.test('every bundled skill has a script whose final answers validate against its output schema', async (t) => {
  const schema = (id: string): ReturnType<typeof compileSchema> => compileSchema(JSON.parse(readFileSync(join(ROOT, 'skills', id, 'assets', 'output.schema.json'), 'utf8')));
  t.same(Object.keys(SKILL_SCRIPTS).sort(), ['plan-trip', 'summarize-text', 'write-commit-message'], 'one per folder in skills/');
  const skillMd = { command: "cat /run/SKILL.md", output: '# x\nWrite every deliverable file under `/run/artifacts`.\n## Runtime: interactive run\n' };
  const final = (reply: ReturnType<typeof demoModel>): unknown => {
    if (!('text' in reply)) throw new Error(`not a final answer: ${JSON.stringify(reply)}`);
    const json = /```json\n([\s\S]*)\n```/.exec(reply.text)?.[1] ?? 'null';
    const { __SKILL_DONE__: marker, ...output } = JSON.parse(json) as Record<string, unknown>;
    t.equal(marker, true, 'with the done marker');
    return output;
  };
  const summarize = SKILL_SCRIPTS['summarize-text'] as (turn: SkillTurn) => ReturnType<typeof demoModel>;
  for (const text of ['One line without a full stop', 'Short. Two sentences!', 'A. B. C. D. E. F. G. H. I. J. K. L.']) {
    const output = final(summarize(turnOf('summarize-text', { text, max_points: 3 }, { commands: [skillMd] })));
    t.same(schema('summarize-text')(output), [], text);
    t.ok((output as { key_points: string[] }).key_points.length <= 3, 'at most max_points');
  }
  const plan = SKILL_SCRIPTS['plan-trip'] as (turn: SkillTurn) => ReturnType<typeof demoModel>;
  for (const replies of [['a week of hiking, on a budget'], ['whatever', 'no idea'], ['two nights, bars and art, avoid crowds', '3']]) {
    const output = final(plan(turnOf('plan-trip', { destination: 'Kyoto' }, { commands: [skillMd], questions: replies.map(() => 'q'), replies })));
    t.same(schema('plan-trip')(output), [], replies.join(' / '));
  }
  const commit = SKILL_SCRIPTS['write-commit-message'] as (turn: SkillTurn) => ReturnType<typeof demoModel>;
  const longName = `src/${'very-long-folder-name/'.repeat(4)}file.ts`;
  const diff = `diff --git a/${longName} b/${longName}\nnew file mode 100644\n--- /dev/null\n+++ b/${longName}\n+export class Widget {}\n`;
  const wrote = { command: 'mkdir -p /run/artifacts && printf …', output: '' };
  const output = final(commit(turnOf('write-commit-message', { repository: '/r' }, { commands: [skillMd, { command: 'git -C /r diff --staged', output: diff }, wrote], questions: ['q'], replies: ['a reason'] })));
  t.same(schema('write-commit-message')(output), [], 'a long subject is cut to 72 characters');
  t.match(output, { subject: /^feat: add Widget/ });
  t.match(demoModel({ conversation: [], userTexts: [] } as never), { text: /only runs the bundled example skills/ }, 'a request that is no skill run gets no made-up result');
});
