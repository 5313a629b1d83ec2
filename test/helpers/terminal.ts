import { execFileSync, spawn } from 'node:child_process';
import { SKILLCTL_BIN } from './daemon.js';

/** Why terminal tests are skipped, or false when util-linux `script` is there to give skillctl a pseudo-terminal. */
export const noTerminal: string | false = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v script'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'util-linux `script` is not installed: no pseudo-terminal to run skillctl on';
  }
})();

/**
 * The environment of a terminal that allows colour (`hasColors()` true): TERM names a colour
 * terminal, and nothing that turns colour off or forces it is set (CI=true alone turns it off).
 */
export function colourTerminalEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const terminal: NodeJS.ProcessEnv = { ...env, TERM: 'xterm-256color' };
  for (const name of ['NO_COLOR', 'FORCE_COLOR', 'NODE_DISABLE_COLORS', 'CI']) delete terminal[name];
  return { ...terminal, ...extra };
}

/** The end of a run on the pseudo-terminal: skillctl's exit code and every byte the terminal showed. */
export interface TerminalOutcome {
  code: number | null;
  output: string;
}

/** What to wait for in the output. */
export type Pattern = string | RegExp | ((output: string) => boolean);

/** skillctl running on a pseudo-terminal: what it has shown so far, keys to type, its end. */
export interface TerminalRun {
  /** Everything shown so far (stdout and stderr both go to the terminal). */
  readonly output: string;
  /** Resolves once the output matches `pattern` (a string: contains it; a function: says so); rejects if skillctl ends first. */
  until(pattern: Pattern): Promise<void>;
  /** Types keys at the terminal: `\n` ends a line, `\x03` is Ctrl-C, `\x04` Ctrl-D. */
  type(keys: string): void;
  readonly done: Promise<TerminalOutcome>;
}

/**
 * Runs the built skillctl with `args` on a pseudo-terminal: util-linux `script -qfec`, which
 * passes what is written to its stdin to the terminal (so Ctrl-C there is a SIGINT, as from a
 * keyboard) and exits with skillctl's exit code. Killed after 30 s.
 */
export function onTerminal(args: string[], env: NodeJS.ProcessEnv): TerminalRun {
  const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
  // `exec`: skillctl replaces the shell, so that the terminal's Ctrl-C reaches skillctl alone.
  const command = `exec ${[process.execPath, SKILLCTL_BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let ended = false;
  const waiters = new Set<() => void>();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of [...waiters]) wake();
  });
  const done = new Promise<TerminalOutcome>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      ended = true;
      for (const wake of [...waiters]) wake();
      resolve({ code, output });
    });
  });
  const matches = (pattern: Pattern): boolean => (typeof pattern === 'string' ? output.includes(pattern) : typeof pattern === 'function' ? pattern(output) : pattern.test(output));
  return {
    get output() {
      return output;
    },
    until: (pattern) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (matches(pattern)) resolve();
          else if (ended) reject(new Error(`skillctl ended before showing ${String(pattern)}:\n${JSON.stringify(output)}`));
          else return;
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    type: (keys) => void child.stdin.write(keys),
    done,
  };
}

/**
 * The lines a terminal would show at the end for `output`: carriage returns go back to the start
 * of the line, `ESC [ K` / `ESC [ J` erase to its end, `ESC [ n G` moves to column n, colour codes
 * take no room; the lines are returned without colour and trailing spaces.
 */
export function screenLines(output: string): string[] {
  return output.split('\n').map((raw) => {
    let line: string[] = [];
    let col = 0;
    for (let i = 0; i < raw.length; i += 1) {
      const ch = raw[i] as string;
      if (ch === '\r') col = 0;
      else if (ch === '\x1b' && raw[i + 1] === '[') {
        const match = /^\x1b\[([0-9;]*)([A-Za-z])/.exec(raw.slice(i));
        if (match === null) continue;
        i += match[0].length - 1;
        const [, arg = '', command] = match;
        if (command === 'K' || command === 'J') line = line.slice(0, col);
        else if (command === 'G') col = Math.max(0, Number(arg || '1') - 1);
      } else {
        while (line.length < col) line.push(' ');
        line[col] = ch;
        col += 1;
      }
    }
    return line.join('').trimEnd();
  });
}
