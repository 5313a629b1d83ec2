import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { SKILLCTL_BIN } from './paths.js';
import { command as styleCommand } from './say.js';

/** What one skillctl run printed (empty when it ran on the terminal) and how it ended. */
export interface CtlOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A word as a person would type it in a POSIX shell; `k=v` keeps its `k=` outside the quotes. */
export function typed(word: string): string {
  const plain = /^[\w@%+=:,./-]+$/;
  if (plain.test(word)) return word;
  const assignment = /^(-?-?[\w-]+=)(.*)$/s.exec(word);
  const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
  return assignment !== null && plain.test(assignment[1] as string) ? `${assignment[1]}${quote(assignment[2] as string)}` : quote(word);
}

/** The command line a person would type for `argv`. */
export function commandLine(argv: readonly string[]): string {
  return ['skillctl', ...argv.map(typed)].join(' ');
}

/**
 * Runs the built skillctl against the demo's socket, the way the demo shows it: prints the command
 * line first, then lets skillctl print as usual. On the terminal (`terminal`) skillctl gets it
 * whole, to ask its questions; otherwise its output is passed through and also kept.
 */
export class Skillctl {
  /** Every command line run, in order. */
  readonly ran: string[] = [];
  readonly #socket: string;
  readonly #running = new Set<ChildProcess>();

  constructor(socket: string) {
    this.#socket = socket;
  }

  run(argv: readonly string[], options: { terminal?: boolean } = {}): Promise<CtlOutcome> {
    const line = commandLine(argv);
    this.ran.push(line);
    process.stdout.write(`\n${styleCommand(`$ ${line}`)}\n`);
    const env = { ...process.env, SKILLD_SOCKET: this.#socket };
    const stdio: StdioOptions = options.terminal === true ? 'inherit' : ['ignore', 'pipe', 'pipe'];
    const child: ChildProcess = spawn(process.execPath, [SKILLCTL_BIN, ...argv], { stdio, env });
    this.#running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      process.stdout.write(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => {
        this.#running.delete(child);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }

  /** Stops a skillctl that is still running (the demo is being interrupted). */
  stopAll(): void {
    for (const child of this.#running) child.kill('SIGTERM');
  }
}
