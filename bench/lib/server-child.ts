import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { onCleanup } from './cleanup.js';
import { libModule } from './paths.js';
import { benchEnv } from './util.js';

/** A baseline server in a process of its own (as the daemon is). */
export interface ServerChild {
  pid: number;
  /** The lines it printed before `ready` (e.g. the port it chose), in order. */
  said: readonly string[];
  /**
   * Writes `line` to its stdin and resolves with the next line it prints: how a bench asks a
   * server for what only it knows (its heap, what it counted) without a protocol of its own.
   */
  ask(line: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `dist/bench/lib/<name>.js` with `args` in `dir`; resolves once it prints `ready`. */
export async function spawnServerChild(dir: string, name: string, args: readonly string[], env: Record<string, string> = {}): Promise<ServerChild> {
  return spawnReadyProcess(dir, name, [libModule(name), ...args], process.execPath, env);
}

/** Starts `program` (node) with `argv` in `dir` and `env` added to the bench's (`label` names it in errors); resolves once it prints a line `ready`. */
export async function spawnReadyProcess(dir: string, label: string, argv: readonly string[], program: string = process.execPath, env: Record<string, string> = {}): Promise<ServerChild> {
  const child = spawn(program, argv, { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'], env: benchEnv(env) });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const unregister = onCleanup(stop);
  child.stdin.on('error', () => undefined);
  const said: string[] = [];
  const answers: { resolve(line: string): void; reject(error: Error): void }[] = [];
  // A question to a child that has exited would wait for ever.
  child.once('exit', (code) => {
    for (const answer of answers.splice(0)) answer.reject(new Error(`${label} exited with ${String(code)} before it answered`));
  });
  let ready = false;
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (ready) answers.shift()?.resolve(line);
      else if (line === 'ready') {
        ready = true;
        resolve();
      } else said.push(line);
    });
    child.once('exit', (code) => reject(new Error(`${label} exited with ${String(code)} before it was ready`)));
  });
  return {
    pid: child.pid ?? Number.NaN,
    said,
    ask: (line) =>
      new Promise((resolve, reject) => {
        if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`${label} has exited`));
        answers.push({ resolve, reject });
        child.stdin.write(`${line}\n`);
      }),
    stop: async () => {
      await stop();
      unregister();
    },
  };
}
