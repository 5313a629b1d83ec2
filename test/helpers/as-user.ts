import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import t from 'tap';
import { ROOT } from './daemon.js';

const run = promisify(execFile);

/** A user made for a test (root only), removed at the test's end. */
export interface TestUser {
  name: string;
  uid: number;
  gid: number;
}

/** Why users cannot be made here, or null: the test runs as root with useradd. */
export async function cannotMakeUsers(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'needs root to create system users for the test; these tests did NOT run';
  try {
    await run('useradd', ['--help']);
    return null;
  } catch (error) {
    return (error as { code?: unknown }).code === 'ENOENT' ? 'useradd is missing; these tests did NOT run' : null;
  }
}

/** A group and users made for this test run, with names of their own so that runs side by side do not meet; all removed at the end. */
export async function makeUsers(names: readonly string[], groups: Record<string, readonly string[]> = {}): Promise<{ users: Record<string, TestUser>; groups: Record<string, string> }> {
  const tag = randomBytes(3).toString('hex');
  const groupNames: Record<string, string> = {};
  for (const group of Object.keys(groups)) {
    groupNames[group] = `sk${tag}${group}`;
    await run('groupadd', [groupNames[group]]);
    t.teardown(() => run('groupdel', [groupNames[group] as string]).catch(() => undefined));
  }
  const users: Record<string, TestUser> = {};
  for (const name of names) {
    const user = `sk${tag}${name}`;
    const extra = Object.entries(groups).filter(([, members]) => members.includes(name)).map(([group]) => groupNames[group] as string);
    await run('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', ...(extra.length > 0 ? ['--groups', extra.join(',')] : []), user]);
    t.teardown(() => run('userdel', [user]).catch(() => undefined));
    const [uid, gid] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
    users[name] = { name: user, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  }
  return { users, groups: groupNames };
}

/** The answer of one request: its result, or its error's code and message. */
export type Answer = { result: unknown } | { error: { code: string; message: string } };

const CLIENT = `
const { RpcClient, RpcCallError } = await import(${JSON.stringify(`${ROOT}/dist/rpc/client.js`)});
const [socket, method, params] = process.argv.slice(1);
const client = await RpcClient.connect(socket);
try {
  process.stdout.write(JSON.stringify({ result: await client.request(method, JSON.parse(params)) }));
} catch (error) {
  if (!(error instanceof RpcCallError)) throw error;
  process.stdout.write(JSON.stringify({ error: { code: error.dataCode, message: error.message } }));
} finally {
  client.close();
}`;

/** One request to the daemon at `socket` from a process of `user` (its uid, gid and groups): what the kernel tells the daemon is that user. */
export async function requestAs(user: TestUser, socket: string, method: string, params: unknown = {}): Promise<Answer> {
  const { stdout } = await run('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', process.execPath, '--input-type=module', '-e', CLIENT, socket, method, JSON.stringify(params)], { timeout: 30_000 });
  return JSON.parse(stdout) as Answer;
}

/** skillctl run as `user`: its exit code and output. */
export async function skillctlAs(user: TestUser, argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', process.execPath, `${ROOT}/dist/clients/skillctl.js`, ...argv], { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
