// A sandbox per job (docs/sandbox.md): a hostile engine tries, from inside a job, each read,
// listing, write, signal, kernel setting, variable and resource that reaches beyond what its
// plan names, and reports what happened: every attempt is refused and its own work succeeds, with
// the daemon as root (engines then run as another user) and as an unprivileged user of its own.
// Then what a job leaves in its own folders for the daemon's next engine start: links it planted
// lead the daemon nowhere, and a path its input named that turned into a link is not shown.
import t from 'tap';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { ETC_SHOWN } from '../../daemon/sandbox/system-paths.js';
import { testPostgres, waitForStatus, type JobView } from '../helpers/daemon.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { fakeEngines, hostDaemon, reachOf, runJob, widenSchema } from '../helpers/sandbox-host.js';

const ROOT_USER = process.getuid?.() === 0;
/** The uid a daemon of its own user runs as when the test runs as root. */
const DAEMON_UID = 65534;

/** A listening socket of "another daemon", in a folder of its own. */
async function otherDaemonSocket(): Promise<string> {
  const folder = await mkdtemp('/var/tmp/skilld-other-');
  const socket = join(folder, 'skilld.sock');
  const server = createServer((conn) => conn.end());
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(async () => {
    server.close();
    await rm(folder, { recursive: true, force: true });
  });
  return socket;
}

/** What the host holds in `folder` but `shown`: none of it may be seen inside. */
function hostEntries(folder: string, shown: readonly string[]): string[] {
  return readdirSync(folder).filter((entry) => !shown.includes(entry));
}

const variants = ROOT_USER ? [{ as: 'root', uid: undefined }, { as: 'an unprivileged user of its own', uid: DAEMON_UID }] : [{ as: 'its own user', uid: undefined }];

for (const variant of variants) {
  t.test(`the daemon as ${variant.as}: a hostile engine reaches nothing beyond what its plan names, and its own work succeeds`, { skip: NO_SANDBOX }, async (t) => {
    const secrets = { PGPASSWORD: 'pg-secret', DATABASE_URL: 'postgres://skilld:pw@db/skilld', ANTHROPIC_API_KEY: 'sk-ant-secret' };
    const { daemon, dir } = await hostDaemon({
      config: (dir) => ({ engines: fakeEngines({ codex: { CODEX_HOME: join(dir, 'codex-home') } }), max_concurrent: 4, limits: { tmp: '8MiB' } }),
      env: secrets,
      uid: variant.uid,
      prepare: async (dir) => {
        // A configured engine home elsewhere: its settings and credentials are for every job, the sessions in it for none.
        await mkdir(join(dir, 'codex-home', 'sessions'), { recursive: true });
        await writeFile(join(dir, 'codex-home', 'config.toml'), 'model = "configured"\n');
        await writeFile(join(dir, 'codex-home', 'auth.json'), '{"token":"shared"}\n');
        await writeFile(join(dir, 'codex-home', 'sessions', 'someone.jsonl'), 'a conversation from before\n');
      },
    });
    const codexHome = join(dir, 'codex-home');
    const client = await daemon.client();
    const status = await client.request<{ sandbox: { user: { uid: number; switched: boolean } } }>('daemon/status');
    t.match(status.sandbox.user, ROOT_USER && variant.uid === undefined ? { uid: 65534, switched: true } : { switched: false }, 'status says who engines are');

    // Another job, done, with a file in its workspace and a session in its home; and one that runs, holding a secret in its input.
    const other = await runJob(daemon, 'codex', { scenario: 'ok' });
    t.equal(other.isolation, 'sandbox', 'jobs run in a sandbox where the probe passes');
    const otherRun = daemon.runDir(other.job_id);
    await writeFile(join(otherRun, 'workspace', 'secret.txt'), 'another job\'s work\n');
    await mkdir(join(otherRun, 'engine-home', 'sessions'), { recursive: true });
    await writeFile(join(otherRun, 'engine-home', 'sessions', 'theirs.jsonl'), 'another job\'s conversation\n');
    const running = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'gemini', input: { scenario: 'ok', release_file: 'release', emit: { word: 'other-job-secret-word' } } });
    t.teardown(() => daemon.release(running.job_id));
    const skillMd = join(dir, 'skills', 'echo-auto', 'SKILL.md');
    const skillBefore = await readFile(skillMd, 'utf8');
    const pg = await testPostgres();

    const probe = {
      read: {
        "another job's file": join(otherRun, 'workspace', 'secret.txt'),
        "another job's prompt": join(otherRun, 'attempts', '1', 'prompt.txt'),
        "another job's session": join(otherRun, 'engine-home', 'sessions', 'theirs.jsonl'),
        'a session in the configured home': join(codexHome, 'sessions', 'someone.jsonl'),
        "the daemon's state": join(daemon.stateDir, 'state.json'),
        "the daemon's config": join(dir, 'config.json'),
        '~/.pgpass': join(dir, 'home', '.pgpass'),
        'the shell history': join(dir, 'home', '.bash_history'),
        'an SSH key': join(dir, 'home', '.ssh', 'id_ed25519'),
        '/etc/shadow': '/etc/shadow',
        '/etc/machine-id': '/etc/machine-id',
      },
      list: {
        'the runs folder': { folder: join(daemon.stateDir, 'runs'), secrets: [other.job_id] },
        "the daemon user's home": { folder: join(dir, 'home'), secrets: ['.pgpass', '.bash_history', '.ssh'] },
        'the skills folder': { folder: join(dir, 'skills'), secrets: ['echo-auto'] },
        // The folders on the way to what is shown are there, empty but for that way.
        '/var': { folder: '/var', secrets: hostEntries('/var', ['tmp']) },
        '/var/tmp': { folder: '/var/tmp', secrets: hostEntries('/var/tmp', [basename(dir)]) },
        '/etc': { folder: '/etc', secrets: hostEntries('/etc', [...ETC_SHOWN.map((name) => name.split('/')[0] ?? ''), 'passwd', 'group']) },
        // Only the way out of the job's own network is there (docs/network.md).
        '/run': { folder: '/run', secrets: hostEntries('/run', ['skilld']) },
      },
      write: { "a skills folder's skill": skillMd, "another job's workspace": join(otherRun, 'workspace', 'secret.txt') },
      exists: Object.fromEntries(['/srv', '/opt', '/var/lib', '/var/log', '/home', '/mnt', '/media', '/sys', '/boot'].map((path) => [path, path])),
      open_w: { 'write a kernel setting (vm/drop_caches)': '/proc/sys/vm/drop_caches' },
      access_w: { 'a kernel setting writable (kernel/core_pattern)': '/proc/sys/kernel/core_pattern' },
      fill: { 'fill /tmp past its size (8 MiB)': { file: '/tmp/fill', bytes: 16 * 1024 * 1024 } },
      env: Object.keys(secrets),
      sockets: { "another daemon's socket": await otherDaemonSocket(), ...(typeof pg === 'string' ? {} : { "the PostgreSQL store's socket": join(pg.socketDir, '.s.PGSQL.5432') }) },
      socket: daemon.socket,
      daemon_pid: daemon.child.pid,
      daemon_cmd: ['dist/daemon', 'bin.js'],
      secret: ['other-job-', 'secret-word'],
      work_fill: 1024 * 1024,
    };
    // Codex's configured home is elsewhere: its settings are read there, its credentials written.
    const readable: Record<string, Record<string, string>> = { codex: { "its engine's settings": join(codexHome, 'config.toml'), "its engine's credentials": join(codexHome, 'auth.json') }, claude: {} };
    for (const engine of ['codex', 'claude']) {
      await t.test(engine, async (t) => {
        const job = await runJob(daemon, engine, { scenario: 'hostile_fs', probe: { ...probe, readable: readable[engine] } });
        t.equal(job.status, 'succeeded', JSON.stringify(job.error));
        t.equal(job.isolation, 'sandbox');
        const reach = await reachOf(daemon, job.job_id);
        t.ok(reach.attempts.length >= 30, `every attempt was made (${reach.attempts.length})`);
        for (const attempt of reach.attempts) t.notOk(attempt.ok, `refused: ${attempt.name} (${attempt.detail})`);
        t.match(reach.attempts.find((a) => a.name.startsWith('fill /tmp')), { detail: /^ENOSPC after 8388608 bytes$/ }, '/tmp holds its size and no more');
        for (const work of reach.work) t.ok(work.ok, `its own work: ${work.name} (${work.detail})`);
        const run = daemon.runDir(job.job_id);
        t.equal(await readFile(join(run, 'workspace', 'artifacts', 'own.txt'), 'utf8'), 'own work\n', 'its work is in its workspace');
        t.ok(existsSync(join(run, 'home', '.agent-note')), 'what it wrote in HOME is in its own home');
        t.equal(await readFile(skillMd, 'utf8'), skillBefore, 'the skill is unchanged');
        t.equal(await readFile(join(otherRun, 'workspace', 'secret.txt'), 'utf8'), 'another job\'s work\n', 'the other job\'s file is unchanged');
        t.notOk(existsSync('/tmp/agent-scratch') || existsSync('/planted-by-agent'), 'its /tmp was its own, and its root nobody\'s');
      });
    }
    t.ok(existsSync(join(codexHome, 'sessions', 'someone.jsonl')) && !existsSync(join(codexHome, '.agent-note')), 'the configured home holds nothing of the jobs');
  });
}

t.test('links a job leaves in its own home lead the daemon nowhere at its next engine start', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon({
    prepare: async (dir) => {
      await mkdir(join(dir, 'home', '.codex'));
      await writeFile(join(dir, 'home', '.codex', 'config.toml'), 'model = "configured"\n');
      await writeFile(join(dir, 'home', '.codex', 'models_cache.json'), '{"models":[]}\n');
      await widenSchema(dir, 'echo-both');
    },
  });
  const outside = join(dir, 'outside');
  // Inside, HOME is the job's own home, with the engine's home folder in it.
  const codex = join(dir, 'home', '.codex');
  const plant = [
    { path: join(codex, 'models_cache.json'), target: join(outside, 'seeded', 'models_cache.json') },
    { path: join(codex, 'prompts'), target: join(outside, 'prompts') },
  ];
  const client = await daemon.client();
  const input = { scenario: 'hostile_fs', probe: { plant, readable: { "its engine's settings": join(codex, 'config.toml') } } };
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-both', engine: 'codex', execution_mode: 'interactive', input });
  await waitForStatus(client, created.job_id, ['waiting_user']);
  const jobCodex = join(daemon.runDir(created.job_id), 'home', '.codex');
  t.ok(lstatSync(join(jobCodex, 'models_cache.json')).isSymbolicLink(), 'the job left a link where the daemon seeded its home');
  t.ok(lstatSync(join(jobCodex, 'prompts')).isSymbolicLink(), 'and one where a settings folder will be shown');
  // The operator adds a settings folder: the next engine process shows it at the place the link holds.
  await mkdir(join(codex, 'prompts'));
  await client.request('jobs/reply', { job_id: created.job_id, interaction_id: 1, response: 'go on' });
  const done = await waitForStatus(client, created.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  t.notOk(existsSync(outside), 'nothing was made where the links led: the home is not seeded again, the place of what is shown is made without following a link');
  t.ok(lstatSync(join(jobCodex, 'prompts')).isDirectory(), 'the link in that place was replaced');
  const reach = await reachOf(daemon, created.job_id);
  t.match(reach.work.find((w) => w.name === "its engine's settings"), { ok: true, detail: 'model = "configured"\n' }, 'and the engine\'s settings are shown as before');
});

t.test('a path the input names that turns into one of the daemon\'s places after jobs/create is not shown', { skip: NO_SANDBOX }, async (t) => {
  const { daemon, dir } = await hostDaemon({
    config: () => ({ max_concurrent: 1 }),
    prepare: async (dir) => {
      await widenSchema(dir, 'echo-auto', { source: { type: 'string' } }, { input_paths: { source: 'read_only' } });
      await mkdir(join(dir, 'door', 'runs'), { recursive: true });
      await writeFile(join(dir, 'door', 'runs', 'README'), 'the project\n');
    },
  });
  const client = await daemon.client();
  // The one slot is held, so that the second job waits between its check and its engine's start.
  const holder = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'ok', release_file: 'release' } });
  await waitForStatus(client, holder.job_id, ['running']);
  const source = join(dir, 'door', 'runs');
  const probe = { read: { "the daemon's state, through the flipped path": join(source, '..', 'state.json') }, list: { 'the runs, through the flipped path': { folder: source, secrets: [holder.job_id] } } };
  const created = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: { scenario: 'hostile_fs', probe, source } });
  // A component flipped to a link into the state folder: `door/runs` is now the daemon's runs folder.
  await rename(join(dir, 'door'), join(dir, 'door.before'));
  await symlink(daemon.stateDir, join(dir, 'door'));
  await daemon.release(holder.job_id);
  const done = await waitForStatus(client, created.job_id);
  t.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const reach = await reachOf(daemon, created.job_id);
  for (const attempt of reach.attempts.filter((a) => a.name.includes('flipped'))) t.notOk(attempt.ok, `refused: ${attempt.name} (${attempt.detail})`);
});
