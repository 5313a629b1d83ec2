import { existsSync } from 'node:fs';
import t from 'tap';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES } from '../../rpc/errors.js';
import type { RpcClient } from '../../rpc/client.js';
import { FIXTURES, TestDaemon, alive, type JobView } from '../helpers/daemon.js';

/** A small seeded generator (mulberry32): the same seed replays the same script. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = Number(process.env['CHAOS_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const random = prng(seed);
const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(random() * items.length)];
const pause = (maxMs: number): Promise<void> => new Promise((r) => setTimeout(r, Math.floor(random() * maxMs)));

const JOBS = 42;
const STEPS = 90;
const config = {
  max_concurrent: 4,
  kill_grace_ms: 200,
  engines: {
    codex: { command: [join(FIXTURES, 'fake-codex.mjs')] },
    gemini: { command: [join(FIXTURES, 'fake-gemini.mjs')], env: { FAKE_ENGINE_NO_RESUME: '1' } },
    iflow: { command: [join(FIXTURES, 'fake-iflow.mjs')] },
  },
};

function jobParams(n: number): Record<string, unknown> {
  const kind = n % 3;
  const delay = Math.floor(random() * 300);
  if (kind === 0) return { skill_id: 'echo-auto', engine: pick(['codex', 'iflow']), input: { scenario: 'ok', delay_ms: delay, emit: { greeting: `auto ${n}` } } };
  const scenario = pick(['ask', 'ask_twice']) as string;
  if (kind === 1) return { skill_id: 'echo-both', engine: pick(['codex', 'iflow']), execution_mode: 'interactive', input: { scenario, delay_ms: delay, emit: { greeting: `resumable ${n}` } } };
  return { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario, delay_ms: delay, emit: { greeting: `sticky ${n}` } } };
}

t.test(`chaos: ${JOBS} jobs, random engine kills, random replies, two daemon crashes taking up the running turns (seed ${seed})`, async (t) => {
  t.comment(`replay with CHAOS_SEED=${seed}`);
  let daemon = await TestDaemon.start({ config });
  let client = await daemon.client();
  const dir = daemon.dir;
  t.teardown(() => daemon.cleanup());
  const jobIds: string[] = [];
  const acknowledged: Array<{ job_id: string; interaction_id: number; response: string }> = [];
  const crashAt = new Set([Math.floor(STEPS * (0.25 + random() * 0.2)), Math.floor(STEPS * (0.6 + random() * 0.2))]);

  // The engines that run now, as this process sees them (a sandboxed one writes its own namespace's pid).
  const enginePids = async (): Promise<number[]> => {
    const pids: number[] = [];
    for (const id of jobIds) {
      if (!existsSync(join(daemon.runDir(id), 'workspace', '.fake-engine', 'pid'))) continue;
      const pid = await daemon.enginePid(id).catch(() => null);
      if (pid !== null && alive(pid)) pids.push(pid);
    }
    return pids;
  };

  const replyToOne = async (c: RpcClient): Promise<void> => {
    const { jobs } = await c.request<{ jobs: JobView[] }>('jobs/list', { status: 'waiting_user', limit: 100 });
    const job = pick(jobs);
    if (job === undefined) return;
    const interactionId = job['pending_interaction_id'] as number;
    const response = `answer ${job.job_id} #${interactionId}`;
    try {
      await c.request('jobs/reply', { job_id: job.job_id, interaction_id: interactionId, response });
      acknowledged.push({ job_id: job.job_id, interaction_id: interactionId, response });
    } catch (error) {
      // A job may have moved on (lost process, cancel) between the list and the reply: that is a clean refusal.
      t.match((error as { dataCode: string }).dataCode, /^(JOB_NOT_WAITING|INTERACTION_STALE)$/);
    }
  };

  // One-shot turns whose engine ran when the daemon was killed: each is taken up (docs/restarts.md).
  const aliveAtCrash = new Set<string>();
  for (let step = 0; step < STEPS; step += 1) {
    if (crashAt.has(step)) {
      const { jobs: running } = await client.request<{ jobs: JobView[] }>('jobs/list', { status: 'running', limit: 100 });
      for (const job of running.filter((j) => (j['interactive_profile'] as { kind: string } | null)?.kind !== 'sticky_process')) {
        const started = existsSync(join(daemon.runDir(job.job_id), 'workspace', '.fake-engine', 'pid'));
        const pid = started ? await daemon.enginePid(job.job_id).catch(() => null) : null;
        if (pid !== null && alive(pid)) aliveAtCrash.add(job.job_id);
      }
      await daemon.kill();
      daemon = await TestDaemon.start({ dir, config });
      client = await daemon.client();
      continue;
    }
    const roll = random();
    if (roll < 0.45 && jobIds.length < JOBS) {
      jobIds.push((await client.request<JobView>('jobs/create', jobParams(jobIds.length))).job_id);
    } else if (roll < 0.75) {
      await replyToOne(client);
    } else if (roll < 0.9) {
      const pid = pick(await enginePids());
      try {
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      } catch {
        // it ended between the look and the kill
      }
    }
    await pause(60);
  }
  while (jobIds.length < JOBS) jobIds.push((await client.request<JobView>('jobs/create', jobParams(jobIds.length))).job_id);

  // Let the work settle: answer whatever waits until nothing is queued or running, within a bound.
  const settleBy = Date.now() + 180_000; // a hang, not a busy machine: the file may take 300 s
  for (;;) {
    const status = await client.request<{ jobs: Record<string, number> }>('daemon/status');
    if ((status.jobs['queued'] ?? 0) + (status.jobs['running'] ?? 0) === 0) break;
    if (Date.now() > settleBy) throw new Error(`jobs did not settle: ${JSON.stringify(status.jobs)}`);
    await replyToOne(client);
    await new Promise((r) => setTimeout(r, 50));
  }

  const jobs = await Promise.all(jobIds.map((id) => client.request<JobView>('jobs/get', { job_id: id })));
  for (const job of jobs) {
    const legit = ['succeeded', 'failed', 'canceled'].includes(job.status) || (job.status === 'waiting_user' && job['execution_mode'] === 'interactive');
    t.ok(legit, `${job.job_id} is terminal or legitimately waiting (${job.status})`);
    if (job.status === 'failed') t.ok(job.error !== null && ERROR_CODES[job.error.code as keyof typeof ERROR_CODES]?.kind === 'job', `${job.job_id} failed with a registered code (${job.error?.code})`);
  }
  const interrupted = jobs.filter((j) => aliveAtCrash.has(j.job_id) && j.error?.code === 'DAEMON_RESTART_INTERRUPTED').map((j) => j.job_id);
  t.same(interrupted, [], `no turn whose engine was alive at a crash is interrupted by it (turns taken up: ${aliveAtCrash.size})`);
  const stickyWaiting = jobs.filter((j) => j.status === 'waiting_user' && (j['interactive_profile'] as { kind: string }).kind === 'sticky_process').length;
  const status = await client.request<{ slots: { used: number }; jobs: Record<string, number> }>('daemon/status');
  t.equal(status.slots.used, (status.jobs['running'] ?? 0) + stickyWaiting, 'slots used = running + sticky waiting');

  for (const job of jobs.filter((j) => j.status === 'waiting_user')) await client.request('jobs/cancel', { job_id: job.job_id });
  t.match(await client.request('daemon/status'), { slots: { used: 0, queued: 0 } }, 'no slot leaked');

  const snapshot = await readFile(join(daemon.stateDir, 'state.json'), 'utf8').catch(() => null);
  if (snapshot !== null) t.ok(typeof JSON.parse(snapshot) === 'object', 'the state snapshot parses');
  const journal = (await readFile(join(daemon.stateDir, 'state.wal'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
  t.ok(journal.every((line) => typeof JSON.parse(line) === 'object'), `every state journal line parses (${journal.length})`);
  for (const reply of acknowledged) {
    const history = await client.request<{ interactions: Array<{ interaction_id: number; response: unknown }> }>('jobs/history', { job_id: reply.job_id });
    t.ok(history.interactions.some((i) => i.interaction_id === reply.interaction_id && i.response === reply.response), `acknowledged reply to ${reply.job_id} #${reply.interaction_id} is in its history`);
  }
  await daemon.stop();
  const leftovers: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cwd = await readlink(`/proc/${name}/cwd`).catch(() => '');
    if (cwd.startsWith(dir) && alive(Number(name))) leftovers.push(Number(name));
  }
  t.same(leftovers, [], 'no engine process is left alive');
  t.comment(`${acknowledged.length} replies acknowledged; statuses: ${JSON.stringify(jobs.reduce<Record<string, number>>((acc, j) => ({ ...acc, [j.status]: (acc[j.status] ?? 0) + 1 }), {}))}`);
});
