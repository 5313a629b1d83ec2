import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { onCleanup } from './cleanup.js';
import { libModule } from './paths.js';
import { benchEnv } from './util.js';

/** A baseline server in a process of its own (as the daemon is). */
export interface ServerChild {
  pid: number;
  stop(): Promise<void>;
}

/** Starts `dist/bench/lib/<name>.js` with `args` in `dir`; resolves once it prints `ready`. */
export async function spawnServerChild(dir: string, name: string, args: readonly string[]): Promise<ServerChild> {
  const child = spawn(process.execPath, [libModule(name), ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'], env: benchEnv() });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const unregister = onCleanup(stop);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${String(code)} before it was ready`)));
  });
  return {
    pid: child.pid ?? Number.NaN,
    stop: async () => {
      await stop();
      unregister();
    },
  };
}
