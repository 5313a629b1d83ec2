import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { LiveSessionClosed, type LiveProtocol, type LiveSession, type LiveStart } from '../../daemon/engines/live-session.js';

/** A live session on a process of its own, wired as the daemon wires one: stdout lines in, messages out on stdin. */
export interface LiveProcess {
  session: LiveSession;
  child: ChildProcess;
  /** Everything the process printed on stdout, line by line. */
  stdout: string[];
  /** Resolves with the exit code once the process is gone and its output read (the session is disposed then). */
  exited: Promise<number | null>;
  /** Closes stdin and waits for the exit. */
  end(): Promise<number | null>;
  /** SIGKILL to the process and everything it started (its process group), then waits for the exit. */
  kill(): Promise<number | null>;
}

export function startLive(command: readonly string[], protocol: LiveProtocol, start: LiveStart, env: Record<string, string> = {}): LiveProcess {
  const [file, ...args] = [...command, ...protocol.argv(start)] as [string, ...string[]];
  const child = spawn(file, args, { cwd: start.cwd, env: { ...process.env, ...protocol.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const session = protocol.connect({ send: (line) => child.stdin?.write(`${line}\n`) }, start);
  const stdout: string[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    stdout.push(line);
    session.receive(line);
  });
  child.stderr?.resume();
  child.stdin?.on('error', () => undefined);
  const exited = once(child, 'close').then(([code]) => {
    session.dispose(new LiveSessionClosed(`the process exited with ${String(code)}`));
    return code as number | null;
  });
  return {
    session,
    child,
    stdout,
    exited,
    end: () => {
      child.stdin?.end();
      return exited;
    },
    kill: () => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
      return exited;
    },
  };
}
