import { spawn, type ChildProcess } from 'node:child_process';
import { stopAtExit } from './at-exit.js';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import pg from 'pg';
import { RpcCallError, RpcClient } from '../../rpc/client.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';
import { hostPid } from './job-processes.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const DAEMON_BIN = join(ROOT, 'dist', 'daemon', 'bin.js');
export const SKILLCTL_BIN = join(ROOT, 'dist', 'clients', 'skillctl.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const TEST_SKILLS = join(FIXTURES, 'skills');
export const ENGINE_NAMES = ['codex', 'gemini', 'iflow', 'claude'] as const;
export type TestEngine = (typeof ENGINE_NAMES)[number];

export interface DaemonOptions {
  config?: Record<string, unknown>;
  skillsDirs?: string[];
  /** Reuse a folder (restart tests); a new temp folder otherwise. */
  dir?: string;
  /** The socket path; `<dir>/skilld.sock` otherwise. */
  socket?: string;
  env?: Record<string, string>;
  /**
   * Where the daemon keeps jobs: `files`, or `postgres` (a database of its own in this process's
   * throwaway cluster, kept across restarts in the same folder). Default: `SKILLD_TEST_STORE`,
   * else `files`; a `store` in `config` wins.
   */
  store?: 'files' | 'postgres';
  /** Another build's daemon (an upgrade test); this checkout's `dist/` otherwise. */
  bin?: string;
  /**
   * Runs the daemon as this unprivileged uid (and gid), not as the test's user: for a test run as
   * root. Its folder is given to it; tap's hooks are left out of it (they write as the test's user).
   */
  uid?: number;
}

/** The store the tests run against when a test does not choose (`SKILLD_TEST_STORE=postgres` runs the suites on PostgreSQL). */
export const TEST_STORE: 'files' | 'postgres' = process.env['SKILLD_TEST_STORE'] === 'postgres' ? 'postgres' : 'files';

/** For tests of the files store's own files (state.json, the journal): skipped when the suites run on PostgreSQL. */
export const FILES_ONLY: string | false = TEST_STORE === 'files' ? false : 'checks the files store\'s own files';

let cluster: Promise<ThrowawayPostgres | string> | null = null;

/** This process's throwaway PostgreSQL, started on first use; a string says why there is none. */
export function testPostgres(): Promise<ThrowawayPostgres | string> {
  cluster ??= startThrowawayPostgres();
  return cluster;
}

/** The store URL of the daemon in `dir`: the one it had before (a restart), else a new database. */
async function postgresUrl(dir: string): Promise<string> {
  const file = join(dir, 'store-url');
  const known = await readFile(file, 'utf8').catch(() => null);
  if (known !== null) return known;
  const pg = await testPostgres();
  if (typeof pg === 'string') throw new Error(`the tests asked for a PostgreSQL store, but there is none: ${pg}`);
  const url = await pg.createDatabase('daemon');
  await writeFile(file, url);
  return url;
}

/** Gives a folder and all in it to `uid` (its group the same number). */
async function chownTree(dir: string, uid: number): Promise<void> {
  await chown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) await chown(join(entry.parentPath, entry.name), uid, uid);
}

/** The `release_file` input that holds a fake engine's turn until `TestDaemon.release` is called. */
export const RELEASE_FILE = 'release';

/** A real daemon process on a socket in a temp folder, with the fake engines configured. */
export class TestDaemon {
  readonly dir: string;
  readonly socket: string;
  readonly stateDir: string;
  readonly child: ChildProcess;
  readonly logLines: string[] = [];
  readonly #logWaiters = new Set<(line: string) => void>();
  #clients: RpcClient[] = [];

  private constructor(dir: string, socket: string, child: ChildProcess) {
    this.dir = dir;
    this.socket = socket;
    this.stateDir = join(dir, 'state');
    this.child = child;
  }

  static async start(options: DaemonOptions = {}): Promise<TestDaemon> {
    const { dir, socket, child } = await TestDaemon.#spawn(options);
    const daemon = new TestDaemon(dir, socket, child);
    await daemon.#waitReady();
    return daemon;
  }

  /**
   * A daemon that is to stop before it is ready (a refused start): its exit code and what it
   * wrote. One that becomes ready instead is stopped, and says so in `ready`.
   */
  static async refused(options: DaemonOptions = {}): Promise<{ code: number | null; ready: boolean; stdout: string; stderr: string; socket: string }> {
    const { socket, child } = await TestDaemon.#spawn(options);
    let stdout = '';
    let stderr = '';
    let ready = false;
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!ready && stdout.includes('"skilld ready"')) {
        ready = true;
        child.kill('SIGTERM');
      }
    });
    // 'close', not 'exit': every byte it wrote has been read by then.
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, ready, stdout, stderr, socket };
  }

  static async #spawn(options: DaemonOptions): Promise<{ dir: string; socket: string; child: ChildProcess }> {
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'skilld-test-')));
    const store = (options.store ?? TEST_STORE) === 'postgres' ? { store: await postgresUrl(dir) } : {};
    const config = {
      engines: Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)] }])),
      // A test's daemon takes its engines with it when it stops; restart tests keep them (docs/restarts.md).
      engines_on_stop: 'stop',
      ...store,
      ...options.config,
    };
    await writeFile(join(dir, 'config.json'), JSON.stringify(config));
    const skills = options.skillsDirs ?? [TEST_SKILLS];
    const socket = options.socket ?? join(dir, 'skilld.sock');
    const args = [options.bin ?? DAEMON_BIN, '--config', join(dir, 'config.json'), '--socket', socket, '--state-dir', join(dir, 'state'), '--log-level', 'debug'];
    for (const s of skills) args.push('--skills-dir', s);
    const asUser = options.uid === undefined ? [] : ['setpriv', `--reuid=${options.uid}`, `--regid=${options.uid}`, '--clear-groups', 'env', '-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE'];
    if (options.uid !== undefined) await chownTree(dir, options.uid);
    const [file = process.execPath, ...rest] = [...asUser, process.execPath, ...args];
    const child = stopAtExit(spawn(file, rest, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } }));
    return { dir, socket, child };
  }

  async #waitReady(): Promise<void> {
    let buffered = '';
    let stderr = '';
    this.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolveReady, reject) => {
      this.child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          this.logLines.push(line);
          for (const waiter of this.#logWaiters) waiter(line);
          if (line.includes('"skilld ready"')) resolveReady();
        }
      });
      this.child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before ready: ${stderr}`)));
    });
  }

  /** Resolves with the first log line (already written or still to come) that `matches`. */
  logged(matches: (line: string) => boolean): Promise<string> {
    const seen = this.logLines.find(matches);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const waiter = (line: string): void => {
        if (!matches(line)) return;
        this.#logWaiters.delete(waiter);
        resolve(line);
      };
      this.#logWaiters.add(waiter);
    });
  }

  async client(): Promise<RpcClient> {
    const client = await RpcClient.connect(this.socket);
    this.#clients.push(client);
    return client;
  }

  /** SIGTERM and wait for exit; resolves with the exit code. */
  async stop(): Promise<number | null> {
    for (const c of this.#clients) c.close();
    // Already gone (exited, or killed by a test): its exit event has been and will not come again.
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    const [code] = (await once(this.child, 'exit')) as [number | null];
    return code;
  }

  async kill(): Promise<void> {
    for (const c of this.#clients) c.close();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await once(this.child, 'exit');
  }

  async cleanup(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  runDir(jobId: string): string {
    return join(this.stateDir, 'runs', jobId);
  }

  /** A job's stored result or request, wherever this daemon's store keeps it: its run folder, or the database. */
  async storedDoc<T>(jobId: string, name: 'result' | 'request'): Promise<T | null> {
    const url = await readFile(join(this.dir, 'store-url'), 'utf8').catch(() => null);
    if (url === null) {
      const text = await readFile(join(this.runDir(jobId), `${name}.json`), 'utf8').catch(() => null);
      return text === null ? null : (JSON.parse(text) as T);
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<Record<string, T | null>>(`SELECT ${name} FROM skilld.job_docs WHERE job_id = $1`, [jobId]);
      return rows[0]?.[name] ?? null;
    } finally {
      await client.end();
    }
  }

  /**
   * Ends the turn of a job started with `release_file: "release"`: the fake engine waits until that
   * file exists in its working folder, the job's workspace (the one place a sandboxed engine and
   * the test both see).
   */
  async release(jobId: string): Promise<void> {
    await writeFile(join(this.runDir(jobId), 'workspace', RELEASE_FILE), '');
  }

  /**
   * The pid of a job's fake engine (or of what it started: `child-pid`, `orphan-pid`, …) once it
   * has written it, as this process sees it, though a sandboxed engine writes its own namespace's.
   */
  async enginePid(jobId: string, file = 'pid'): Promise<number> {
    const text = await waitForFile(join(this.runDir(jobId), 'workspace', '.fake-engine', file));
    const client = await RpcClient.connect(this.socket);
    try {
      const job = await client.request<{ isolation?: string | null }>('jobs/get', { job_id: jobId });
      return hostPid(jobId, Number(text), job.isolation === 'sandbox');
    } finally {
      client.close();
    }
  }

  /**
   * Kills the keeper of the job's engine process (docs/restarts.md) and waits until it is gone: its
   * engine lives on without it, and the next start cannot take it up, so it stops what is left.
   */
  async killKeeper(jobId: string): Promise<void> {
    const record = JSON.parse(await readFile(join(this.runDir(jobId), 'engine', 'keeper.json'), 'utf8')) as { pid: number };
    process.kill(record.pid, 'SIGKILL');
    await waitUntilGone(record.pid);
  }

  /** The fake engine's record of every invocation in this job's workspace. */
  async engineCalls(jobId: string): Promise<EngineCall[]> {
    const text = await readFile(join(this.runDir(jobId), 'workspace', '.fake-engine', 'calls.ndjson'), 'utf8').catch(() => '');
    return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as EngineCall);
  }
}

/** One invocation (or sticky turn) of a fake engine, as it recorded it. */
export interface EngineCall {
  argv: string[];
  /** In the engine's own PID namespace: with `started`, it names the process (see `processOf`). */
  pid: number;
  started: string;
  prompt: string;
  resume: boolean;
  session: string | null;
}

/** The process a call ran in: calls of one process have the same, of two processes not. */
export function processOf(call: EngineCall | undefined): string {
  return call === undefined ? 'none' : `${call.pid}@${call.started}`;
}

export interface JobView {
  job_id: string;
  status: string;
  error: { code: string; message: string } | null;
  warnings: string[];
  [key: string]: unknown;
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

/**
 * Waits, by subscription (no polling), until the job's status is one of `statuses`, or a terminal
 * one: a finished job changes no more, so waiting on would only end at the file's time limit. The
 * job is given as it then is: a caller that wanted another status says so in its assertion.
 */
export async function waitForStatus(client: RpcClient, jobId: string, statuses: string[] = [...TERMINAL]): Promise<JobView> {
  let done: (job: JobView) => void = () => undefined;
  const reached = new Promise<JobView>((r) => (done = r));
  const check = async (): Promise<void> => {
    const job = await client.request<JobView>('jobs/get', { job_id: jobId });
    if (statuses.includes(job.status) || TERMINAL.has(job.status)) done(job);
  };
  const off = client.on('job/event', (params) => {
    const event = params as { job_id: string; type: string };
    // A check still in flight when the caller has moved on (and closed the client) fails harmlessly.
    if (event.job_id === jobId && (event.type === 'status_changed' || event.type === 'finished')) check().catch(() => undefined);
  });
  const { subscription_id } = await client.request<{ subscription_id: string }>('jobs/subscribe', { job_id: jobId });
  await check();
  const job = await reached;
  off();
  await client.request('jobs/unsubscribe', { subscription_id }).catch(() => undefined);
  return job;
}

/** True while a process with this pid exists and is not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSyncSafe(`/proc/${pid}/stat`);
  if (stat === null) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

function readFileSyncSafe(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * How long the waits below wait before they fail: they catch a hang, so long enough for anything
 * a busy machine merely delays (a cold engine start with coverage and a sandbox takes seconds).
 */
const WAIT_LIMIT_MS = 60_000;

/** Waits for a file to exist (the fake engine writes its pid files as it starts). */
export async function waitForFile(path: string, timeoutMs = WAIT_LIMIT_MS): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text !== null && text !== '') return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits for a file to be removed (what the daemon cleans up after a process has ended). */
export async function waitUntilRemoved(path: string, timeoutMs = WAIT_LIMIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path} to be removed`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the process is gone (a zombie counts as gone), e.g. after a teardown killed it. */
export async function waitUntilGone(pid: number, timeoutMs = WAIT_LIMIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for process ${pid} to end`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The RPC error a request fails with (the test fails if it succeeds, or fails another way). */
export async function rpcError(promise: Promise<unknown>): Promise<RpcCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcCallError) return error;
    throw error;
  }
  throw new Error('the request succeeded; an error was expected');
}
