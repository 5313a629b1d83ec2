import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../args.js';
import type { Context } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { json } from '../format.js';
import { terminalText } from '../terminal-text.js';
import { SkillTestError } from './case-plan.js';
import { readUserSetup } from './engine-command.js';
import { caseText, keptText, reportJson, summaryText } from './report.js';
import { runSkillTests } from './run-tests.js';

/** Exit codes after a signal: 128 + its number, as shells report them. */
const SIGNAL_EXIT = { SIGINT: EXIT.interrupted, SIGTERM: 143 } as const;

/**
 * `skills test <skill> [--engine E] [--case NAME]`: runs the skill's test cases through the real
 * engine CLI against the scripted model, on a private daemon of its own; 0 when every case
 * passes, 1 when one fails (each printed with what differed), 2 for a usage error.
 */
export async function testSkill(ctx: Context, operand: string, options: { engine: string | null; caseName: string | null; keep: boolean }): Promise<number> {
  const setup = await readUserSetup();
  if (setup.problem !== null) ctx.warn(`skillctl: warning: the configuration cannot be read (${terminalText(setup.problem)}): the engines and skills folders are the defaults`);
  const skillDir = skillFolder(operand, setup.skillsDirs);
  let stop: () => Promise<void> = async () => undefined;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT): void => {
    ctx.warn(`skillctl: ${signal}: stopping the test daemon${options.keep ? '' : ' and removing its folder'}`);
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
      onCleanup: (fn) => (stop = fn),
    });
    if (ctx.json) ctx.print(json(reportJson(report.skillId, report.results, report.kept)));
    else ctx.print([summaryText(report.skillId, report.results), ...(report.kept === null ? [] : [keptText(report.kept)])].join('\n'));
    return report.results.some((r) => r.differences.length > 0) ? EXIT.failed : EXIT.ok;
  } catch (error) {
    if (error instanceof SkillTestError && error.usage) throw new UsageError(error.message);
    throw error;
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/** The skill's folder: the operand when it is a folder, else the skill of that id in the daemon's skills folders. */
function skillFolder(operand: string, skillsDirs: readonly string[]): string {
  const given = resolve(operand);
  if (existsSync(given) && statSync(given).isDirectory()) return given;
  const found = skillsDirs.map((dir) => join(dir, operand)).find((dir) => existsSync(join(dir, 'assets', 'runner.json')));
  if (found === undefined) throw new UsageError(`${JSON.stringify(operand)} is neither a skill folder nor the id of a skill in ${skillsDirs.join(', ')}`);
  return found;
}
