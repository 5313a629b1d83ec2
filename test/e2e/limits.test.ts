// What one job may use (docs/sandbox.md, "Limits"): processes and memory by cgroup (v1 or v2,
// whichever the host lets the daemon write), the workspace measured at each turn's end. A job over
// a limit ends with a code that says which; the daemon and other jobs carry on. Where a limit
// cannot be enforced, daemon/status says so and why.
import t from 'tap';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { reachOf, runJob } from '../helpers/sandbox-host.js';

interface LimitView {
  value: number | null;
  enforced: boolean;
  by: string | null;
  reason: string | null;
}

const MIB = 1024 * 1024;

/** The test skills, echo-both lowering the memory limit to 128 MiB in its runner.json. */
async function skillsWithLimits(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-limits-skills-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(TEST_SKILLS, dir, { recursive: true });
  const runner = join(dir, 'echo-both', 'assets', 'runner.json');
  await writeFile(runner, JSON.stringify({ ...JSON.parse(await readFile(runner, 'utf8')), limits: { memory: '128MiB' } }));
  return dir;
}

const daemon = await TestDaemon.start({ config: { max_concurrent: 2, limits: { processes: 64, memory: '1GiB', workspace: '8MiB' } }, skillsDirs: [await skillsWithLimits()] });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();
const { limits } = await client.request<{ limits: Record<'processes' | 'memory' | 'tmp' | 'workspace', LimitView> }>('daemon/status');

t.test('daemon/status says each limit, whether it holds, by what, or why not', async (t) => {
  t.match(limits.processes, { value: 64 });
  t.match(limits.memory, { value: 1024 * MIB });
  t.match(limits.workspace, { value: 8 * MIB, enforced: true, by: /measured at each turn's end/ });
  for (const name of ['processes', 'memory'] as const) {
    const limit = limits[name];
    if (limit.enforced) t.match(limit, { by: /^cgroup v[12]$/, reason: null }, `${name}: by cgroup`);
    else t.match(limit, { by: null, reason: /\S/ }, `${name}: not enforced here, and why: ${limit.reason ?? ''}`);
  }
});

t.test('processes: a job cannot start more than its limit; it carries on, and succeeds', { skip: NO_SANDBOX || (limits.processes.enforced ? false : `processes are not limited here: ${limits.processes.reason ?? ''}`) }, async (t) => {
  const job = await runJob(daemon, 'codex', { scenario: 'hostile_fs', probe: { fork: 100 } });
  t.equal(job.status, 'succeeded', JSON.stringify(job.error));
  const reach = await reachOf(daemon, job.job_id);
  t.match(reach.attempts.find((a) => a.name === 'start 100 processes'), { ok: false, detail: /^EAGAIN after \d+$/ }, 'refused by the kernel');
});

t.test('memory: a job past its limit fails with JOB_LIMIT_EXCEEDED, a skill\'s lower limit first; the daemon carries on', { skip: limits.memory.enforced ? false : `memory is not limited here: ${limits.memory.reason ?? ''}` }, async (t) => {
  const over = await runJob(daemon, 'codex', { scenario: 'memory_hog' });
  t.match(over, { status: 'failed', error: { code: 'JOB_LIMIT_EXCEEDED', message: /memory limit \(1073741824 bytes\)/, details: { limit: 'memory', value: 1024 * MIB } } });
  const lowered = await runJob(daemon, 'gemini', { scenario: 'memory_hog' }, 'echo-both');
  t.match(lowered, { status: 'failed', error: { code: 'JOB_LIMIT_EXCEEDED', details: { limit: 'memory', value: 128 * MIB } } }, 'runner.json lowers the limit for its jobs');
  t.equal((await runJob(daemon, 'codex', { scenario: 'ok' })).status, 'succeeded', 'the next job runs');
});

t.test('workspace: a turn that leaves its workspace past the limit fails with WORKSPACE_TOO_LARGE and the size', async (t) => {
  const over = await runJob(daemon, 'codex', { scenario: 'hostile_fs', probe: { grow: 16 * MIB } });
  t.match(over, { status: 'failed', error: { code: 'WORKSPACE_TOO_LARGE', details: { limit: 'workspace', value: 8 * MIB } } });
  t.ok((over.error as unknown as { details: { used: number } }).details.used >= 16 * MIB, 'the size measured is in its details');
  const within = await runJob(daemon, 'codex', { scenario: 'hostile_fs', probe: { grow: 2 * MIB } });
  t.equal(within.status, 'succeeded', JSON.stringify(within.error));
  const interactive = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input: { scenario: 'ask' } });
  t.equal((await waitForStatus(client, interactive.job_id, ['waiting_user'])).status, 'waiting_user', 'a job within its limit waits as ever');
  await client.request('jobs/cancel', { job_id: interactive.job_id });
});
