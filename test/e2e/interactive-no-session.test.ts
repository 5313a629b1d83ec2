// PR-15..PR-17 through the real daemon: a turn that asks but shows no session id must never enter
// waiting_user on the resumable profile. No fake scenario asks without a session id ('no_session'
// finishes like 'ok'), so each fake engine runs behind a small filter that deletes the session id
// from its output (codex `thread.started`, gemini `session_id`, iflow `session-id`) and passes
// everything else through unchanged, including `--help` for the resume probe.
import t from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_NAMES, FIXTURES, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';

interface Job extends JobView {
  attempt: number;
  interactive_profile: { kind: string; reason: string } | null;
  session_handle: unknown;
  pending_interaction_id: number | null;
}
interface JobEvent {
  job_id: string;
  type: string;
  data: Record<string, unknown>;
}

const FILTER = `
import { spawn } from 'node:child_process';
import readline from 'node:readline';
const [fake, ...args] = process.argv.slice(2);
const child = spawn(process.execPath, [fake, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
const drop = /"type":"thread\\.started"|"session_id":|"session-id":/;
for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
  readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
    if (!drop.test(line)) to.write(line + '\\n');
  });
}
child.on('close', (code) => { process.exitCode = code ?? 1; });
`;

const tools = await mkdtemp(join(tmpdir(), 'skilld-nosession-'));
const filter = join(tools, 'strip-session-id.mjs');
await writeFile(filter, FILTER);
const engines = Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [process.execPath, filter, join(FIXTURES, `fake-${name}.mjs`)] }]));
const daemon = await TestDaemon.start({ config: { engines, max_concurrent: 4 } });
t.teardown(async () => {
  await daemon.cleanup();
  await rm(tools, { recursive: true, force: true });
});
const client = await daemon.client();

const IDS = { codex: 'PR-15', gemini: 'PR-16', iflow: 'PR-17' } as const;

t.test('PR-15 PR-16 PR-17 the filtered engines still pass the resume probe (resumable profile)', async (t) => {
  const { engines: listed } = await client.request<{ engines: Array<{ name: string; interactive_profile: { kind: string } }> }>('engines/list');
  for (const engine of listed) t.equal(engine.interactive_profile.kind, 'resumable', engine.name);
});

t.test('PR-15 PR-16 PR-17 a turn that asks without a session id never waits: failed SESSION_RESUME_FAILED', async (t) => {
  await Promise.all(
    ENGINE_NAMES.map(async (engine) => {
      const events: JobEvent[] = [];
      const watcher = await daemon.client();
      watcher.on('job/event', (params) => events.push(params as JobEvent));
      const created = await client.request<Job>('jobs/create', { skill_id: 'echo-both', engine, execution_mode: 'interactive', input: { scenario: 'ask' } });
      await watcher.request('jobs/subscribe', { job_id: created.job_id, after_seq: 0 });
      t.equal(created.interactive_profile?.kind, 'resumable', `${IDS[engine]} ${engine}: resumable profile`);
      const done = (await waitForStatus(client, created.job_id)) as Job;
      t.equal(done.status, 'failed', `${IDS[engine]} ${engine}: failed`);
      t.equal(done.error?.code, 'SESSION_RESUME_FAILED', `${IDS[engine]} ${engine}: SESSION_RESUME_FAILED (${done.error?.message ?? ''})`);
      t.equal(done.attempt, 1, `${engine}: one turn`);
      t.equal(done.session_handle, null, `${engine}: no handle was stored`);
      t.equal(done.pending_interaction_id, null, `${engine}: no pending id`);
      const calls = await daemon.engineCalls(created.job_id);
      t.equal(calls.length, 1, `${engine}: no resume was attempted`);
      const engineSession = calls[0]?.session ?? '';
      t.type(calls[0]?.session, 'string', `${engine}: the engine had a session...`);
      const attemptDir = join(daemon.runDir(created.job_id), 'attempts', '1');
      const seen = (await readFile(join(attemptDir, 'stdout.log'), 'utf8')) + (await readFile(join(attemptDir, 'stderr.log'), 'utf8'));
      t.notOk(engineSession !== '' && seen.includes(engineSession), `${engine}: ...but its id never reached the daemon`);
      t.match(seen, 'Which city should I use?', `${engine}: the question itself did reach the daemon`);
      const ours = events.filter((e) => e.job_id === created.job_id);
      t.notOk(ours.some((e) => e.type === 'status_changed' && e.data['to'] === 'waiting_user'), `${engine}: never waiting_user`);
      t.notOk(ours.some((e) => e.type === 'input_required'), `${engine}: no input_required`);
      t.same((await client.request<{ interactions: unknown[] }>('jobs/history', { job_id: created.job_id })).interactions, [], `${engine}: no question recorded`);
      watcher.close();
    }),
  );
  t.match(await client.request('daemon/status'), { slots: { used: 0, queued: 0 } }, 'no slot held');
});

t.test('PR-15 PR-16 PR-17 a turn without a session id that finishes needs no resume: succeeded', async (t) => {
  const created = await client.request<Job>('jobs/create', { skill_id: 'echo-both', engine: 'gemini', execution_mode: 'interactive', input: { scenario: 'ok' } });
  const done = (await waitForStatus(client, created.job_id)) as Job;
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  t.equal(done.session_handle, null, 'no handle, none needed');
});
