import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Context } from '../../clients/command.js';
import type { RpcClient } from '../../rpc/client.js';
import { SKILLCTL_BIN } from './daemon.js';

const run = promisify(execFile);

/** What one run of the built skillctl printed, and its exit code. */
export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built skillctl with exactly `argv` and `env`; never throws on a non-zero exit. A
 * command that drives real engines (skills test) takes longer than the default 30 s may allow.
 */
export async function runSkillctl(argv: string[], env: NodeJS.ProcessEnv, options: { cwd?: string; timeoutMs?: number } = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SKILLCTL_BIN, ...argv], { env, timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

export type CapturedContext = Context & { out: string[]; err: string[] };

/** A skillctl Context on `client` that collects what skillctl would print. */
export function capture(client: RpcClient): CapturedContext {
  const out: string[] = [];
  const err: string[] = [];
  return { client, json: false, out, err, print: (s) => void out.push(s), write: (s) => void out.push(typeof s === 'string' ? s : Buffer.from(s).toString('utf8')), warn: (s) => void err.push(s), reconnect: () => Promise.resolve(false) };
}
