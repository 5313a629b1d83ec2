// The shell examples of README.md and docs/protocol.md, run as printed (only the socket path, and
// the job id where the text names one, are filled in) with real bash and socat against a daemon.
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RELEASE_FILE, ROOT, TestDaemon, waitForStatus } from '../helpers/daemon.js';
import { hasTool } from '../helpers/tools.js';

const run = promisify(execFile);

const missing = ['bash', 'socat', 'jq'].filter((tool) => !hasTool(tool));
const skip = missing.length === 0 ? false : `${missing.join(' and ')} missing (.ci/run installs them): the examples use them`;

/** The fenced `sh` blocks of a Markdown file. */
async function shellBlocks(file: string): Promise<string[]> {
  const text = await readFile(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

/** The one block that holds `marker`; the test fails when the docs lose it. */
async function block(file: string, marker: string): Promise<string> {
  const found = (await shellBlocks(file)).filter((b) => b.includes(marker));
  if (found.length !== 1) throw new Error(`${file}: expected one sh block with ${JSON.stringify(marker)}, found ${found.length}`);
  return found[0] as string;
}

/** Sets `sock` to the test daemon's socket in place of the line that sets it in the text. */
function withSocket(script: string, socket: string): string {
  if (!/^sock=\$\(skillctl socket\)/m.test(script)) return `sock='${socket}'\n${script}`;
  return script.replace(/^sock=\$\(skillctl socket\)/m, `sock='${socket}'`);
}

interface Line {
  id?: number;
  method?: string;
  result?: Record<string, unknown>;
  error?: unknown;
  params?: { job_id: string; seq: number; type: string; data: Record<string, unknown> };
}
const lines = (text: string): Line[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line);

t.test('README: the socat lines work as printed, and each request is answered once (half-close)', { skip }, async (t) => {
  const daemon = await TestDaemon.start({ skillsDirs: [join(ROOT, 'skills')] });
  t.teardown(() => daemon.cleanup());
  const script = withSocket(await block('README.md', 'UNIX-CONNECT'), daemon.socket);
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: daemon.dir, timeout: 60_000 });
  const [skills, result, ...rest] = lines(stdout);
  t.same(rest, [], 'two lines: skills/list and jobs/result (jobs/create is read by jq)');
  t.equal(skills?.id, 1);
  t.ok((skills?.result?.['skills'] as Array<{ id: string }>).some((s) => s.id === 'summarize-text'), 'skills/list answered');
  t.equal(result?.id, 4);
  const jobId = result?.result?.['job_id'] as string;
  t.match(jobId, /^job-/, 'jobs/result answered for the job that jobs/create made');
  t.match(result?.result?.['status'], /^(succeeded|failed|canceled)$/, 'once the job had ended: the loop waited for it');
  const client = await daemon.client();
  t.equal((await client.request<{ skill_id: string }>('jobs/get', { job_id: jobId })).skill_id, 'summarize-text');
  t.equal((await client.request<{ jobs: unknown[] }>('jobs/list', {})).jobs.length, 1, 'exactly one job: nothing to retry, nothing duplicated');
});

t.test('docs/protocol.md: several requests on one connection', { skip }, async (t) => {
  const daemon = await TestDaemon.start();
  t.teardown(() => daemon.cleanup());
  const script = withSocket(await block('docs/protocol.md', '"id":2,"method":"skills/list"'), daemon.socket);
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 60_000 });
  t.same(lines(stdout).map((l) => l.id).sort(), [1, 2]);
});

t.test('docs/protocol.md: following events with the input held open', { skip }, async (t) => {
  const daemon = await TestDaemon.start();
  t.teardown(() => daemon.cleanup());
  const script = withSocket(await block('docs/protocol.md', 'sleep infinity'), daemon.socket);
  // Its own process group, so that the end of the test stops socat and sleep together, as Ctrl-C would.
  const follower = spawn('bash', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(async () => {
    if (follower.exitCode === null) {
      process.kill(-(follower.pid as number), 'SIGINT');
      await once(follower, 'exit');
    }
  });
  let text = '';
  const waiters = new Set<() => void>();
  follower.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters) w();
  });
  const shows = (pattern: RegExp): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (pattern.test(text)) resolve();
      };
      waiters.add(check);
      check();
    });
  await shows(/"subscription_id"/);
  const client = await daemon.client();
  const job = await client.request<{ job_id: string }>('jobs/create', { skill_id: 'echo-both', engine: 'codex', input: { scenario: 'ok' } });
  await shows(new RegExp(`"job_id":"${job.job_id}"[^\\n]*"type":"finished"`));
  const events = lines(text).filter((l) => l.method === 'job/event' && l.params?.job_id === job.job_id).map((l) => l.params);
  t.same(events.map((e) => e?.seq), events.map((_, i) => i + 1), 'every event of the job, in order, from seq 1');
  t.same(events[0]?.data, { from: null, to: 'queued' });
  t.same(events.at(-1)?.data, { status: 'succeeded', error: null });
  t.equal(follower.exitCode, null, 'still following: the held input keeps the subscription');
});

t.test('docs/protocol.md: the bash script that follows one job stops by itself at its end', { skip }, async (t) => {
  const daemon = await TestDaemon.start();
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const job = await client.request<{ job_id: string }>('jobs/create', { skill_id: 'echo-both', engine: 'codex', input: { scenario: 'ok', release_file: RELEASE_FILE } });
  const text = withSocket(await block('docs/protocol.md', 'coproc SKILLD'), daemon.socket);
  if (!/^job=\S+$/m.test(text)) throw new Error('the script no longer sets job=');
  const script = text.replace(/^job=\S+$/m, `job=${job.job_id}`);
  const follower = run('bash', ['-c', script], { timeout: 60_000 });
  await waitForStatus(client, job.job_id, ['running']);
  await daemon.release(job.job_id);
  const { stdout } = await follower;
  const all = lines(stdout);
  t.equal(all[0]?.id, 1, 'the subscribe answer first');
  const events = all.slice(1).map((l) => l.params);
  t.same(events.map((e) => e?.seq), events.map((_, i) => i + 1), 'the replay from seq 1, then the live events, no gap');
  t.equal(events.at(-1)?.type, 'finished', 'and it ends at finished');
});
