import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DAEMON_BIN, FILES_ONLY, TestDaemon, alive, waitForFile, waitForStatus, type JobView } from '../helpers/daemon.js';

const run = promisify(execFile);

t.test('TP-4 TP-6 the run folder holds a patched SKILL.md and the first-turn prompt lists inputs and parameters', async (t) => {
  const daemon = await TestDaemon.start();
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'iflow', input: { scenario: 'ok', emit: { greeting: 'x' } } });
  await waitForStatus(client, created.job_id);
  const runDir = daemon.runDir(created.job_id);
  const skillMd = await readFile(join(runDir, 'skill', 'SKILL.md'), 'utf8');
  t.match(skillMd, /^# echo-auto/, 'the original instructions come first');
  t.match(skillMd, join(runDir, 'workspace', 'artifacts'), 'TP-6 deliverables are redirected into the run artifacts folder');
  t.match(skillMd, /Do not ask the user anything/, 'TP-4 the auto patch forbids asking');
  t.match(skillMd, /__SKILL_DONE__/, 'the completion contract is there');
  const prompt = await readFile(join(runDir, 'attempts', '1', 'prompt.txt'), 'utf8');
  t.match(prompt, join(runDir, 'skill', 'SKILL.md'));
  t.match(prompt, /\n- scenario: "ok"\n- emit: \{"greeting":"x"\}\n/);
  const calls = await daemon.engineCalls(created.job_id);
  t.same(calls[0]?.argv, ['--yolo', '--thinking', `--prompt=${prompt}`], 'TP-10 the engine got the prompt verbatim');
});

t.test('SIGTERM stops engines, removes the socket and exits 0; a restart keeps finished jobs and fails the interrupted one', async (t) => {
  const daemon = await TestDaemon.start({ config: { kill_grace_ms: 200 } });
  t.teardown(() => rm(daemon.dir, { recursive: true, force: true }));
  const client = await daemon.client();
  const done = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { emit: { greeting: 'kept' } } });
  await waitForStatus(client, done.job_id);
  const hanging = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: { scenario: 'hang' } });
  await waitForStatus(client, hanging.job_id, ['running']);
  const enginePid = await daemon.enginePid(hanging.job_id);
  const toolPid = await daemon.enginePid(hanging.job_id, 'child-pid');
  t.equal(await daemon.stop(), 0, 'exit code 0');
  t.notOk(alive(enginePid), 'the engine was stopped before the daemon exited');
  t.notOk(alive(toolPid), 'and so was its tool');
  t.notOk(existsSync(daemon.socket), 'the socket file is removed');

  const again = await TestDaemon.start({ dir: daemon.dir });
  t.teardown(() => again.stop());
  const c = await again.client();
  t.match(await c.request('jobs/get', { job_id: done.job_id }), { status: 'succeeded' });
  t.match(await c.request('jobs/result', { job_id: done.job_id }), { output: { greeting: 'kept' } });
  t.match(await c.request('jobs/get', { job_id: hanging.job_id }), { status: 'failed', error: { code: 'DAEMON_RESTART_INTERRUPTED' } });
});

t.test('a corrupt state file is reported and kept aside, never silently replaced', { skip: FILES_ONLY }, async (t) => {
  // A graceful stop folds the journal into the state.json snapshot; the crash comes on the next run.
  const first = await TestDaemon.start();
  await first.stop();
  const daemon = await TestDaemon.start({ dir: first.dir });
  const client = await daemon.client();
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hang' } });
  await waitForStatus(client, job.job_id, ['running']);
  const enginePid = await daemon.enginePid(job.job_id);
  await daemon.kill();
  t.teardown(() => {
    try {
      process.kill(-enginePid, 'SIGKILL');
    } catch {
      // already gone: the restart stops survivors itself
    }
  });
  const statePath = join(daemon.stateDir, 'state.json');
  const original = await readFile(statePath, 'utf8');
  await writeFile(statePath, original.slice(0, Math.floor(original.length / 2)));
  const again = await TestDaemon.start({ dir: daemon.dir });
  t.teardown(() => again.cleanup());
  const status = await (await again.client()).request<{ notices: Array<{ code: string; path: string }> }>('daemon/status');
  t.equal(status.notices[0]?.code, 'STATE_FILE_CORRUPT');
  const aside = (await readdir(daemon.stateDir)).find((name) => name.startsWith('state.json.corrupt-'));
  t.ok(aside, 'the damaged file is kept aside');
  t.equal(await readFile(join(daemon.stateDir, aside as string), 'utf8'), original.slice(0, Math.floor(original.length / 2)), 'byte for byte');
  t.ok(again.logLines.some((line) => line.includes('STATE_FILE_CORRUPT')), 'and logged');
});

t.test('a state.json whose job entry is null, or whose job has status "bogus": the daemon starts, reports them, keeps them aside and invents nothing', { skip: FILES_ONLY }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-damaged-'));
  await mkdir(join(dir, 'state'), { recursive: true });
  const bogus = { job_id: 'job-bogus', skill_id: 'echo-auto', status: 'bogus' };
  await writeFile(join(dir, 'state', 'state.json'), JSON.stringify({ schema_version: 1, jobs: { 'job-null': null, 'job-bogus': bogus } }));
  const daemon = await TestDaemon.start({ dir });
  t.teardown(() => daemon.cleanup());
  const client = await daemon.client();
  const status = await client.request<{ notices: Array<{ code: string; path: string; message: string }>; jobs: Record<string, number> }>('daemon/status');
  t.same(status.notices.map((n) => n.code), ['STATE_RECORD_DAMAGED']);
  t.match(status.notices[0]?.message, /^2 stored record\(s\) could not be loaded/);
  t.same(Object.values(status.jobs).reduce((a, b) => a + b, 0), 0, 'no job was made up from them');
  const kept = (await readFile(status.notices[0]?.path ?? '', 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { key: string; record: unknown });
  t.same(kept.map((k) => [k.key, k.record]), [['job-null', null], ['job-bogus', bogus]], 'both kept aside as they were');
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} });
  t.equal((await waitForStatus(client, job.job_id)).status, 'succeeded', 'and the daemon works');
});

t.test('a bad config file stops start-up with a message naming the key', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-cfg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cases: Array<[unknown, RegExp]> = [
    [{ max_concurrent: 'four' }, /"max_concurrent" must be an integer/],
    [{ engines: { codex: { profile: 'sometimes' } } }, /"engines\.codex\.profile" must be one of/],
    [{ sockett: '/x' }, /"sockett" is unknown/],
  ];
  for (const [config, message] of cases) {
    await writeFile(join(dir, 'c.json'), JSON.stringify(config));
    const result = await run(process.execPath, [DAEMON_BIN, '--config', join(dir, 'c.json'), '--socket', join(dir, 's.sock'), '--state-dir', join(dir, 'state')]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    t.equal(result.code, 2);
    t.match(result.stderr, message);
    t.notOk(existsSync(join(dir, 's.sock')), 'nothing is served half-configured');
  }
});
