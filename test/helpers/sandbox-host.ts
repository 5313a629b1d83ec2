// A daemon whose folders are where an operator's would be, for the sandbox's tests: state,
// socket, config, skills and the daemon user's HOME apart from each other and not below /tmp,
// with the secrets a home holds.
import t from 'tap';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from './daemon.js';

export interface Attempt {
  name: string;
  ok: boolean;
  detail: string;
}
export interface Reach {
  attempts: Attempt[];
  work: Attempt[];
}

export interface HostOptions {
  config?: (dir: string) => Record<string, unknown>;
  env?: Record<string, string>;
  prepare?: (dir: string) => Promise<void>;
  /** Runs the daemon as this unprivileged uid (TestDaemon's `uid`). */
  uid?: number | undefined;
}

export async function hostDaemon(options: HostOptions = {}): Promise<{ daemon: TestDaemon; dir: string }> {
  const dir = await mkdtemp('/var/tmp/skilld-test-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await writeFile(join(home, '.pgpass'), 'db:5432:*:skilld:secret-password\n', { mode: 0o600 });
  await writeFile(join(home, '.bash_history'), 'export API_KEY=secret-key\n');
  await writeFile(join(home, '.ssh', 'id_ed25519'), 'secret private key\n', { mode: 0o600 });
  await cp(TEST_SKILLS, join(dir, 'skills'), { recursive: true });
  await options.prepare?.(dir);
  const config = { engines: fakeEngines(), ...options.config?.(dir) };
  const daemon = await TestDaemon.start({ dir, socket: join(dir, 'run', 'skilld.sock'), skillsDirs: [join(dir, 'skills')], store: 'files', config, env: { HOME: home, ...options.env }, ...(options.uid === undefined ? {} : { uid: options.uid }) });
  t.teardown(() => daemon.stop());
  return { daemon, dir };
}

/** The fake engines, with `env` for some. */
export function fakeEngines(env: Partial<Record<string, Record<string, string>>> = {}): Record<string, unknown> {
  return Object.fromEntries(['codex', 'gemini', 'iflow', 'claude'].map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)], env: env[name] ?? {} }]));
}

/** Runs a job of `skill` to its end and returns it. */
export async function runJob(daemon: TestDaemon, engine: string, input: Record<string, unknown>, skill = 'echo-auto'): Promise<JobView> {
  const client = await daemon.client();
  const created = await client.request<JobView>('jobs/create', { skill_id: skill, engine, input });
  return waitForStatus(client, created.job_id);
}

/** What a hostile_fs job reported. */
export async function reachOf(daemon: TestDaemon, jobId: string): Promise<Reach> {
  const client = await daemon.client();
  return (await client.request<{ output: { reach: Reach } }>('jobs/result', { job_id: jobId })).output.reach;
}

/** Lets a test skill take `probe` (and path inputs, `extra`) in its input schema. */
export async function widenSchema(dir: string, skill: string, extra: Record<string, unknown> = {}, runner: Record<string, unknown> = {}): Promise<void> {
  const assets = join(dir, 'skills', skill, 'assets');
  const schema = JSON.parse(await readFile(join(assets, 'input.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
  await writeFile(join(assets, 'input.schema.json'), JSON.stringify({ ...schema, properties: { ...schema.properties, probe: { type: 'object' }, ...extra } }));
  const current = JSON.parse(await readFile(join(assets, 'runner.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(assets, 'runner.json'), JSON.stringify({ ...current, ...runner }));
}
