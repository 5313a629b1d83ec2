import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RpcClient } from '../../rpc/client.js';
import { UsageError } from '../args.js';
import type { Context } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { json } from '../format.js';
import { terminalText } from '../terminal-text.js';
import { SkillTestError } from './case-plan.js';
import { readUserSetup, type UserSetup } from './engine-command.js';
import { caseText, keptLines, reportJson, summaryText } from './report.js';
import { runSkillTests } from './run-tests.js';

/** Exit codes after a signal: 128 + its number, as shells report them. */
const SIGNAL_EXIT = { SIGINT: EXIT.interrupted, SIGTERM: 143 } as const;

/**
 * `skills test <skill> [--engine E] [--case NAME]`: runs the skill's test cases through the real
 * engine CLI against the scripted model, on the user's daemon when it serves the skill (`socket`),
 * else on a private daemon of its own; 0 when every case passes, 1 when one fails (each printed
 * with what differed), 2 for a usage error.
 */
export async function testSkill(ctx: Context, operand: string, options: { engine: string | null; caseName: string | null; keep: boolean; socket: string | null }): Promise<number> {
  // Read once, when first needed: to find a skill by its id without a daemon, or for a private daemon's engines.
  let reading: Promise<UserSetup> | null = null;
  const setup = (): Promise<UserSetup> =>
    (reading ??= readUserSetup().then((read) => {
      if (read.problem !== null) ctx.warn(`skillctl: warning: the configuration cannot be read (${terminalText(read.problem)}): the engines and skills folders are the defaults`);
      return read;
    }));
  const skillDir = await skillFolder(operand, setup, options.socket);
  let stop: () => Promise<void> = async () => undefined;
  let stopping = false;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT): void => {
    stopping = true;
    ctx.warn(`skillctl: ${signal}: stopping the test${options.keep ? '' : ' and removing what it made'}`);
    void stop().then(() => process.exit(SIGNAL_EXIT[signal]));
  };
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, handler] of handlers) process.once(signal, handler);
  try {
    const report = await runSkillTests({
      skillDir,
      ...options,
      setup,
      onCase: (result) => (ctx.json ? undefined : ctx.print(caseText(result))),
      onNote: (text) => ctx.warn(`skillctl: ${terminalText(text)}`),
      onCleanup: (fn) => (stop = fn),
    });
    if (ctx.json) ctx.print(json(reportJson(report)));
    else ctx.print([summaryText(report.skillId, report.results), ...keptLines(report, options.keep)].join('\n'));
    return report.results.some((r) => r.differences.length > 0) ? EXIT.failed : EXIT.ok;
  } catch (error) {
    // Stopped by a signal: what the stop undid (the daemon, the jobs) fails the run's own requests; the signal's exit says it all.
    if (stopping) return new Promise<number>(() => undefined);
    if (error instanceof SkillTestError && error.usage) throw new UsageError(error.message);
    throw error;
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/**
 * The skill's folder: the operand when it is a folder, else the folder of the skill of that id:
 * the running daemon's (at `socket`), else the one in the skills folders of the configuration.
 */
async function skillFolder(operand: string, setup: () => Promise<UserSetup>, socket: string | null): Promise<string> {
  const given = resolve(operand);
  if (existsSync(given) && statSync(given).isDirectory()) return given;
  const served = socket === null ? null : await servedFolder(socket, operand);
  if (served !== null) return served;
  const { skillsDirs } = await setup();
  const found = skillsDirs.map((dir) => join(dir, operand)).find((dir) => existsSync(join(dir, 'assets', 'runner.json')));
  if (found === undefined) throw new UsageError(`${JSON.stringify(operand)} is neither a skill folder nor the id of a skill in ${skillsDirs.join(', ')}`);
  return found;
}

/** The folder of the daemon's skill `id`; null without a daemon or such a skill. */
async function servedFolder(socket: string, id: string): Promise<string | null> {
  const client = await RpcClient.connect(socket).catch(() => null);
  if (client === null) return null;
  try {
    return (await client.request<{ path: string }>('skills/get', { skill_id: id }).catch(() => null))?.path ?? null;
  } finally {
    client.close();
  }
}
