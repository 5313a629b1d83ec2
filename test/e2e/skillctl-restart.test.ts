// skillctl's followers outlive a restart of the daemon (docs/restarts.md): watch, logs -f and
// attach connect again and go on from where they were, instead of exiting 3.
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RELEASE_FILE, SKILLCTL_BIN, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';

const config = { max_concurrent: 3, kill_grace_ms: 300, engines_on_stop: 'keep' };

/** A skillctl that runs on: what it has printed, a wait for a pattern in it, and its end. */
function follower(argv: string[], env: NodeJS.ProcessEnv): { out: () => string; err: () => string; seen: (pattern: RegExp) => Promise<void>; ended: Promise<number | null> } {
  const child = spawn(process.execPath, [SKILLCTL_BIN, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const grew = (): void => {
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    grew();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    grew();
  });
  const ended = once(child, 'exit').then(([code]) => code as number | null);
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  const seen = async (pattern: RegExp): Promise<void> => {
    while (!pattern.test(out + err)) {
      if (child.exitCode !== null) throw new Error(`skillctl ${argv.join(' ')} ended (${child.exitCode}) before ${String(pattern)}:\n${out}\n${err}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { out: () => out, err: () => err, seen, ended };
}

for (const how of ['SIGTERM', 'SIGKILL'] as const) {
  t.test(`watch, logs -f and attach follow a running job through a restart of the daemon (${how}): each event once, the whole log, exit 0 at its end`, async (t) => {
    const daemon = await TestDaemon.start({ config });
    t.teardown(() => daemon.cleanup());
    const client = await daemon.client();
    const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { release_file: RELEASE_FILE, emit: { greeting: 'kept' } } });
    await waitForStatus(client, job.job_id, ['running']);
    const env = { ...process.env, SKILLD_SOCKET: daemon.socket };
    const watch = follower(['watch', job.job_id, '--json'], env);
    const logs = follower(['logs', job.job_id, '-f', '--raw'], env);
    const attach = follower(['attach', job.job_id], env);
    // Each is following: the engine's first lines reached the first two, the job's status the third.
    await watch.seen(/"type":"output"/);
    await logs.seen(/\S/);
    await attach.seen(/running/);

    if (how === 'SIGKILL') await daemon.kill();
    else t.equal(await daemon.stop(), 0);
    await Promise.all([watch.seen(/connecting again/), attach.seen(/connecting again/)]);
    const again = await TestDaemon.start({ dir: daemon.dir, socket: daemon.socket, config });
    t.teardown(() => again.stop());
    await daemon.release(job.job_id);

    const [watched, logged, attached] = await Promise.all([watch.ended, logs.ended, attach.ended]);
    t.equal(watched, 0, `watch exits 0 at the end: ${watch.err()}`);
    t.equal(logged, 0, `logs -f exits 0 at the end: ${logs.err()}`);
    t.equal(attached, 0, `attach exits 0 with the output: ${attach.err()}`);
    const once = /^skillctl: the daemon went away \(a restart\?\): connecting again\.\.\.\nskillctl: connected again\n$/;
    // Once each: a connection taken by the daemon going away, before its listening socket closed, does not count (link.ts).
    if (!once.test(watch.err())) t.comment(`the daemons' logs:\n${[...daemon.logLines, '--- restarted ---', ...again.logLines].join('\n')}`);
    t.match(watch.err(), once, 'it says so on stderr');

    const seqs = watch.out().split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { seq: number }).seq);
    t.same(seqs, [...seqs].sort((a, b) => a - b).filter((s, i, all) => all.indexOf(s) === i), 'in order, none twice');
    t.same(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1), 'none lost: every event from the first to the last');
    t.match(watch.out().trim().split('\n').at(-1), /"type":"finished"/);
    const printed = await readFile(join(again.runDir(job.job_id), 'attempts', '1', 'stdout.log'), 'utf8');
    t.equal(logs.out(), printed, "logs -f printed the engine's whole stdout, once");
    t.match(JSON.parse(attach.out()), { greeting: 'kept' }, "attach printed the job's output");
  });
}
