import t from 'tap';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { realEngineBins } from '../fixtures/engine-homes.js';
import { ROOT, waitForStatus, waitUntilGone, type JobView } from '../helpers/daemon.js';
import { HOMES, killEach, processesIn, realEngineRig, type RealEngine } from '../helpers/real-engine-runs.js';
import { processAlive } from '../../bench/lib/proc.js';
import { readStat } from '../../daemon/process/proc.js';

/**
 * Sticky jobs on the real CLIs, offline, through the daemon: one live engine process per job
 * serves every turn over the engine's own protocol (Codex `app-server`, Gemini ACP, Claude Code
 * stream-json).
 */
const bins = realEngineBins(join(ROOT, 'node_modules'));
t.setTimeout(300_000);


/** The processes of `pids` whose parent is not among them: one per process tree. */
function treeRoots(pids: number[]): number[] {
  // A process that ended since it was listed (a command the engine ran) has no parent to read.
  return pids.filter((pid) => {
    const parent = readStat(pid)?.ppid;
    return parent !== undefined && !pids.includes(parent);
  });
}

/**
 * The live engine in the workspace, as the root of its process tree: the processes under it come
 * and go (the engine runs helpers and commands), the root is the one that holds the conversation.
 */
function engineRoots(workspace: string): number[] {
  return treeRoots(processesIn(workspace));
}

/**
 * Whether the live engine is still the process tree of `root`: `root` is alive and every live
 * process in the workspace runs under it. By descent, not by listing roots again: a process the
 * listing misses for a moment shows its child as a root of its own (seen once with the real Codex
 * in a sandbox, its tree unchanged).
 */
function stillUnder(workspace: string, root: number): boolean {
  if (!processAlive(root)) return false;
  for (const pid of processesIn(workspace)) {
    let at: number | undefined = pid;
    while (at !== undefined && at > 1 && at !== root) at = readStat(at)?.ppid;
    if (at !== root && processAlive(pid)) return false;
  }
  return true;
}

for (const engine of Object.keys(HOMES) as RealEngine[]) {
  const bin = bins[engine];
  t.test(`real ${engine} CLI in a live session`, { skip: bin === null ? `the real ${engine} CLI is not installed in node_modules (npm ci installs it as a dev dependency); these tests did NOT run` : false }, async (t) => {
    const { server, daemon, client } = await realEngineRig(t, engine, bin as string, { profile: 'sticky_process' });
    const waiting = async (): Promise<{ jobId: string; workspace: string; engineProcesses: number[] }> => {
      const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
      t.match(created, { interactive_profile: { kind: 'sticky_process' } });
      const job = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
      t.equal(job.status, 'waiting_user', `the job waits (error: ${JSON.stringify(job.error)})`);
      const workspace = join(daemon.runDir(created.job_id), 'workspace');
      return { jobId: created.job_id, workspace, engineProcesses: await processesIn(workspace) };
    };

    t.test('ask, wait with the live process, reply to that same process, succeed', async (t) => {
      const { jobId, workspace, engineProcesses } = await waiting();
      const roots = treeRoots(engineProcesses);
      t.equal(roots.length, 1, 'exactly one live engine (one process tree) while the job waits');
      t.match(await client.request('jobs/get', { job_id: jobId }), { session_handle: { engine, handle_type: 'session_id', handle_value: /^[0-9a-f-]{36}$/ } }, 'the engine named its session');
      // A while later, nothing has changed: the process waits with its conversation in memory.
      await new Promise((resolve) => setTimeout(resolve, 500));
      t.match(await client.request('jobs/get', { job_id: jobId }), { status: 'waiting_user' });
      t.ok(stillUnder(workspace, roots[0] as number), 'the same process, still alive');
      const before = server.modelRequests().length;
      await client.request('jobs/reply', { job_id: jobId, interaction_id: 1, response: '--Rome, please' });
      const next = await server.waitForModelRequest(before);
      t.ok(stillUnder(workspace, roots[0] as number), 'the reply reached the model from that same process');
      t.ok(next.userTexts.some((text) => text.startsWith('Run the skill')), 'with the first turn in its conversation');
      const done = await waitForStatus(client, jobId);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      t.match(await client.request('jobs/result', { job_id: jobId }), { output: { reply: '--Rome, please' } }, 'a reply starting with dashes reaches the model verbatim');
      for (const pid of engineProcesses) await waitUntilGone(pid);
    });

    t.test('cancel while waiting leaves no process', async (t) => {
      const { jobId, workspace } = await waiting();
      t.match(await client.request('jobs/cancel', { job_id: jobId }), { status: 'canceled' });
      t.same(await processesIn(workspace), []);
    });

    t.test('cancel while a turn runs interrupts it and leaves no process', async (t) => {
      const since = server.modelRequests().length;
      const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'hang' } });
      await server.waitForModelRequest(since);
      const workspace = join(daemon.runDir(created.job_id), 'workspace');
      t.match(await client.request('jobs/cancel', { job_id: created.job_id }), { status: 'canceled' });
      t.same(await processesIn(workspace), []);
    });

    t.test('approvals "ask": one command allowed, another denied, within the same turn and process', async (t) => {
      const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', approvals: 'ask', input: { scenario: 'two_tools' } });
      const workspace = join(daemon.runDir(created.job_id), 'workspace');
      const answer = async (id: number, response: string, command: RegExp): Promise<void> => {
        const waiting = await waitForStatus(client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
        t.equal(waiting.status, 'waiting_user', JSON.stringify(waiting.error));
        t.match(await client.request('jobs/pending', { job_id: created.job_id }), { pending: { interaction_id: id, kind: 'approval', prompt: command, ui_hints: { approval: { kind: 'command' } } } });
        await client.request('jobs/reply', { job_id: created.job_id, interaction_id: id, response });
      };
      await answer(1, 'allow', /touch allowed\.txt/);
      const engineProcesses = await processesIn(workspace);
      await answer(2, 'deny', /touch denied\.txt/);
      const done = await waitForStatus(client, created.job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      t.equal(done['attempt'], 1, 'all in the first turn');
      t.ok(existsSync(join(workspace, 'allowed.txt')), 'the allowed command ran');
      t.notOk(existsSync(join(workspace, 'denied.txt')), 'the denied one did not');
      t.ok(engineProcesses.length > 0);
      t.match(await client.request('jobs/history', { job_id: created.job_id }), { interactions: [{ kind: 'approval', response: 'allow' }, { kind: 'approval', response: 'deny' }] });
    });

    t.test('the daemon is SIGKILLed while the job waits: the next one takes the live process up, and the reply reaches it', async (t) => {
      const rig = await realEngineRig(t, engine, bin as string, { profile: 'sticky_process' });
      const created = await rig.client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
      const job = await waitForStatus(rig.client, created.job_id, ['waiting_user', 'failed', 'succeeded']);
      t.equal(job.status, 'waiting_user', JSON.stringify(job.error));
      const workspace = join(rig.daemon.runDir(created.job_id), 'workspace');
      const roots = engineRoots(workspace);
      t.equal(roots.length, 1, 'one live engine');
      const { client: c } = await rig.restart();
      t.match(await c.request('jobs/get', { job_id: created.job_id }), { status: 'waiting_user' }, 'still waiting after the restart');
      t.ok(stillUnder(workspace, roots[0] as number), 'the same live process');
      const before = rig.server.modelRequests().length;
      await c.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: '--Lima' });
      const next = await rig.server.waitForModelRequest(before);
      t.ok(next.userTexts.some((text) => text.startsWith('Run the skill')), 'the reply reached the model with the first turn in its conversation');
      const done = await waitForStatus(c, created.job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      t.match(await c.request('jobs/result', { job_id: created.job_id }), { output: { reply: '--Lima' } });
    });

    t.test('SIGKILL of the live process while the job waits: INTERACTION_PROCESS_LOST', async (t) => {
      const { jobId, workspace, engineProcesses } = await waiting();
      killEach(engineProcesses);
      t.match(await waitForStatus(client, jobId), { status: 'failed', error: { code: 'INTERACTION_PROCESS_LOST' } });
      t.same(await processesIn(workspace), []);
      t.match(await client.request('daemon/status'), { slots: { used: 0 } });
    });

    t.test('with sticky_recovery "resume", SIGKILL while waiting keeps the job waiting; the reply resumes the session in a new process', async (t) => {
      const rescue = await realEngineRig(t, engine, bin as string, { profile: 'sticky_process', sticky_recovery: 'resume' });
      const c = rescue.client;
      const created = await c.request<JobView>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
      const job = await waitForStatus(c, created.job_id, ['waiting_user', 'failed', 'succeeded']);
      t.equal(job.status, 'waiting_user', JSON.stringify(job.error));
      const workspace = join(rescue.daemon.runDir(created.job_id), 'workspace');
      killEach(await processesIn(workspace));
      let rescued = await c.request<JobView>('jobs/get', { job_id: created.job_id });
      for (let tries = 0; (rescued['interactive_profile'] as { kind?: string } | null)?.kind !== 'resumable' && tries < 3000; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        rescued = await c.request<JobView>('jobs/get', { job_id: created.job_id });
      }
      t.match(rescued, { status: 'waiting_user', warnings: ['INTERACTION_PROCESS_RESCUED'], interactive_profile: { kind: 'resumable' } });
      const before = rescue.server.modelRequests().length;
      await c.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: '--Oslo' });
      const done = await waitForStatus(c, created.job_id);
      t.equal(done.status, 'succeeded', JSON.stringify(done.error));
      t.match(await c.request('jobs/result', { job_id: created.job_id }), { output: { reply: '--Oslo' } });
      t.ok(rescue.server.modelRequests()[before]?.userTexts.some((text) => text.startsWith('Run the skill')), 'the resumed turn carries the first turn: the same session');
    });
  });
}
