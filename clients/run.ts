import { flagOpt, intOpt, listOpt, stringOpt, definedOnly } from './args.js';
import { arg, type Command, type Invocation } from './command.js';
import { json } from './format.js';
import { onTerminal } from './on-terminal.js';
import type { JobView } from './wire.js';

/** `run <skill> [--engine E] ...`: jobs/create; with `--wait`, or interactive on a terminal, follow the job. */
export const runCommand: Command = {
  name: 'run',
  usage: 'run <skill> [--engine E] [--mode auto|interactive] [--input k=v|k=@file|k=@-]... [--param k=v]... [--input-json JSON|@file|-] [--param-json JSON|@file|-] [--model M] [--timeout SEC] [--share user:NAME|group:NAME]... [--wait]',
  summary: 'create a job; --wait follows it (on a terminal with a status line) and prints its output (exit 1 if it fails); Ctrl-C stops following and leaves the job running (come back with attach, exit 130); see "interactive runs" below',
  options: {
    engine: { type: 'string', short: 'e' },
    mode: { type: 'string' },
    input: { type: 'string', multiple: true, short: 'i' },
    param: { type: 'string', multiple: true, short: 'p' },
    'input-json': { type: 'string' },
    'param-json': { type: 'string' },
    model: { type: 'string' },
    timeout: { type: 'string' },
    wait: { type: 'boolean', short: 'w' },
    share: { type: 'string', multiple: true },
  },
  positionals: [1, 1],
  skillArg: 0,
  run: async (ctx, inv) => {
    const job = await ctx.client.request<JobView>('jobs/create', await createParams(inv));
    const asks = job.execution_mode === 'interactive' && !ctx.json && onTerminal();
    if (!asks && !flagOpt(inv.values, 'wait')) {
      ctx.print(ctx.json ? json(job) : job.job_id);
      return 0;
    }
    return (await import('./run-follow.js')).followMade(ctx, job);
  },
};

/** The `jobs/create` params from the command line; values read as input-values.ts says. */
export async function createParams(inv: Invocation): Promise<Record<string, unknown>> {
  const { values } = inv;
  const { readRunValues } = await import('./input-values.js');
  const read = await readRunValues({ input: [stringOpt(values, 'input-json'), listOpt(values, 'input')], param: [stringOpt(values, 'param-json'), listOpt(values, 'param')] });
  return definedOnly({
    skill_id: arg(inv, 0),
    engine: stringOpt(values, 'engine'),
    execution_mode: stringOpt(values, 'mode'),
    input: read.input,
    parameter: read.parameter,
    model: stringOpt(values, 'model'),
    hard_timeout_sec: intOpt(values, 'timeout'),
    share_with: listOpt(values, 'share').length === 0 ? undefined : listOpt(values, 'share'),
  });
}
