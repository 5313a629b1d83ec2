import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RpcClient } from '../../rpc/client.js';
import { onCleanup } from './cleanup.js';
import { DAEMON_BIN, ENGINE_NAMES, ROOT, TEST_SKILLS, fakeEngine, type BenchEngine } from './paths.js';
import { sampleProc, sweepProcesses, type ProcSample } from './proc.js';
import { benchEnv, nowMs } from './util.js';

export interface DaemonLaunch {
  /** The daemon's folder: config.json, skilld.sock and state/ go here; it is also the daemon's cwd. May already hold a state (restarts). */
  dir: string;
  /** Config file keys (engines excepted). */
  config?: Record<string, unknown>;
  /** Per-engine config merged over `{command: [test/fixtures/fake-<name>.mjs]}`. */
  engines?: Partial<Record<BenchEngine, Record<string, unknown>>>;
  skillsDirs?: string[];
  logLevel?: string;
  readyTimeoutMs?: number;
}

const KEPT_LOG_LINES = 40;
const KEPT_ERROR_LINES = 20;

/**
 * The real built daemon (`node dist/daemon/bin.js`) in a folder of its own, with the fake engines
 * configured. `start` resolves once the "skilld ready" log line is printed; `readyMs` is the time
 * from spawn to that line.
 */
export class BenchDaemon {
  readonly dir: string;
  readonly socket: string;
  readonly stateDir: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readyMs = Number.NaN;
  /** Log lines at level error or fatal (pino level 50/60): a daemon problem the benchmark should show. */
  readonly errorLines: string[] = [];
  readonly #lastLines: string[] = [];
  readonly #clients: RpcClient[] = [];
  #stderr = '';
  #unregister: () => void = () => undefined;
  #stopping: Promise<void> | null = null;

  private constructor(dir: string, child: ChildProcess) {
    this.dir = dir;
    this.socket = join(dir, 'skilld.sock');
    this.stateDir = join(dir, 'state');
    this.child = child;
    if (child.pid === undefined) throw new Error('the daemon could not be spawned');
    this.pid = child.pid;
  }

  static async start(launch: DaemonLaunch): Promise<BenchDaemon> {
    await mkdir(join(launch.dir, 'state'), { recursive: true });
    // The checkout is shown to every engine's sandbox: the fake engines and the stamp module are in it, and a clone may lie below /tmp.
    const engines = Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [fakeEngine(name)], sandbox: { read_only: [ROOT] }, ...launch.engines?.[name] }]));
    const config = { kill_grace_ms: 500, ...launch.config, engines };
    const configPath = join(launch.dir, 'config.json');
    await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
    // BENCH_DAEMON_NODE_ARGS: extra Node options for the daemon only, e.g. "--cpu-prof --cpu-prof-dir=prof" to profile it under a benchmark.
    const nodeArgs = (process.env['BENCH_DAEMON_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== '');
    const args = [...nodeArgs, DAEMON_BIN, '--config', configPath, '--socket', join(launch.dir, 'skilld.sock'), '--state-dir', join(launch.dir, 'state'), '--log-level', launch.logLevel ?? 'info'];
    for (const dir of launch.skillsDirs ?? [TEST_SKILLS]) args.push('--skills-dir', dir);
    const spawnedAt = nowMs();
    const child = spawn(process.execPath, args, { cwd: launch.dir, stdio: ['ignore', 'pipe', 'pipe'], env: benchEnv() });
    const daemon = new BenchDaemon(launch.dir, child);
    daemon.#unregister = onCleanup(() => daemon.stop());
    try {
      const readyAt = await daemon.#waitReady(launch.readyTimeoutMs ?? 60_000);
      daemon.readyMs = readyAt - spawnedAt;
    } catch (error) {
      await daemon.stop();
      throw error;
    }
    return daemon;
  }

  #waitReady(timeoutMs: number): Promise<number> {
    let partial = '';
    let ready: ((at: number) => void) | null = null;
    const stdout = this.child.stdout;
    const stderr = this.child.stderr;
    stderr?.on('data', (chunk: Buffer) => {
      if (this.#stderr.length < 64 * 1024) this.#stderr += chunk.toString();
    });
    stdout?.on('data', (chunk: Buffer) => {
      const at = nowMs();
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        this.#lastLines.push(line);
        if (this.#lastLines.length > KEPT_LOG_LINES) this.#lastLines.shift();
        if ((line.includes('"level":50') || line.includes('"level":60')) && this.errorLines.length < KEPT_ERROR_LINES) this.errorLines.push(line);
        if (ready !== null && line.includes('"skilld ready"')) {
          ready(at);
          ready = null;
        }
      }
    });
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the daemon was not ready after ${timeoutMs} ms\n${this.diagnostics()}`)), timeoutMs);
      ready = (at) => {
        clearTimeout(timer);
        resolve(at);
      };
      this.child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (ready !== null) reject(new Error(`the daemon exited (${String(code ?? signal)}) before it was ready\n${this.diagnostics()}`));
      });
    });
  }

  /** stderr and the last log lines, for error messages. */
  diagnostics(): string {
    return `stderr: ${this.#stderr.trim() || '(empty)'}\nlast log lines:\n${this.#lastLines.join('\n')}`;
  }

  async client(): Promise<RpcClient> {
    const client = await RpcClient.connect(this.socket);
    this.#clients.push(client);
    return client;
  }

  /** Whether an engine of this daemon ran the job: the fake engine's ledger is in its workspace here. */
  ranJob(jobId: string): boolean {
    return existsSync(join(this.stateDir, 'runs', jobId, 'workspace', '.fake-engine', 'calls.ndjson'));
  }

  sample(): ProcSample {
    const sample = sampleProc(this.pid);
    if (sample === null) throw new Error(`daemon ${this.pid} is gone\n${this.diagnostics()}`);
    return sample;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * SIGTERM (the daemon stops its engines and flushes its state), SIGKILL after 20 s; then every
   * process still running in this daemon's folder (its fake engines and their children) is killed.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (const client of this.#clients) client.close();
      if (this.running) {
        const exited = once(this.child, 'exit');
        this.child.kill('SIGTERM');
        const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }
      sweepProcesses(this.dir);
      this.#unregister();
    })();
    return this.#stopping;
  }
}
