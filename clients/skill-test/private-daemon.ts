import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DAEMON_BIN } from './paths.js';

/** How long the daemon may take to start, and to stop after SIGTERM before it is killed. */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** What the daemon is started with. */
export interface DaemonSetup {
  /** A private folder: config, state, socket and log go here. */
  dir: string;
  skillsDir: string;
  /** The config file's contents (engines and limits); socket, state and skills are passed as flags. */
  config: Record<string, unknown>;
}

/** The real daemon, started as a child in a process group of its own. */
export interface DaemonChild {
  child: ChildProcess;
  pid: number;
  socket: string;
  logFile: string;
}

/**
 * Starts `dist/daemon/bin.js` on a private socket and state folder and resolves once it logs that
 * it is ready (its socket accepts); `onSpawn` has it as soon as it runs, so it can be stopped while
 * it starts. Flags rather than the environment: SKILLD_* variables of the
 * person's shell must not move a private daemon onto their own daemon's socket.
 */
export async function startDaemon(setup: DaemonSetup, onSpawn: (daemon: DaemonChild) => void): Promise<DaemonChild> {
  const configFile = join(setup.dir, 'config.json');
  await writeFile(configFile, `${JSON.stringify(setup.config, null, 2)}\n`);
  const socket = join(setup.dir, 'skilld.sock');
  const logFile = join(setup.dir, 'skilld.log');
  const args = [DAEMON_BIN, '--config', configFile, '--socket', socket, '--state-dir', join(setup.dir, 'state'), '--skills-dir', setup.skillsDir, '--log-level', 'info'];
  // Its own process group: Ctrl-C at the terminal reaches its starter, which stops the daemon in order.
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: daemonEnv(process.env) });
  const log = createWriteStream(logFile);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const daemon = { child, pid: child.pid as number, socket, logFile };
  onSpawn(daemon);
  await ready(child, logFile);
  return daemon;
}

/** The environment without what would point the daemon elsewhere (its own variables, systemd's). */
function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('SKILLD_') && !['NOTIFY_SOCKET', 'LISTEN_FDS', 'LISTEN_PID', 'LISTEN_FDNAMES'].includes(key)));
}

/** Resolves at the "skilld ready" log line; rejects if the daemon exits first or takes too long. */
function ready(child: ChildProcess, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(`the daemon was not ready within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      seen = (seen + chunk.toString()).slice(-4096);
      if (!seen.includes('skilld ready')) return;
      done();
      resolve();
    };
    const onExit = (code: number | null, signal: string | null): void => fail(`the daemon exited (${signal ?? `code ${code}`}) before it was ready`);
    const done = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
    };
    const fail = (message: string): void => {
      done();
      void logTail(logFile).then((tail) => reject(new Error(`${message}; its log ends with:\n${tail}`)));
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

/** SIGTERM, then wait for the exit; SIGKILL to its process group if it does not stop in time. */
export async function stopDaemon(daemon: DaemonChild): Promise<void> {
  const { child } = daemon;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => killGroup(daemon.pid), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The last lines of the daemon's log, for an error message. */
export async function logTail(logFile: string, lines = 15): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
