import { flagOpt, intOpt, listOpt, parseAssignments, parseJsonObject, stringOpt, definedOnly, UsageError, type OptionValues } from './args.js';
import { arg, type Command, type Context, type Invocation } from './command.js';
import { followEvents } from './events.js';
import { json } from './format.js';
import { reportResult } from './job-commands.js';
import type { JobView, ResultView } from './wire.js';

/** `run <skill> --engine E ...`: jobs/create, and with `--wait` follow the job to its end. */
export const runCommand: Command = {
  name: 'run',
  usage: 'run <skill> --engine E [--mode auto|interactive] [--input k=v]... [--param k=v]... [--input-json JSON] [--param-json JSON] [--model M] [--timeout SEC] [--wait]',
  summary: 'create a job; with --wait follow it and print its output (exit 1 if it fails)',
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
  },
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const job = await ctx.client.request<JobView>('jobs/create', createParams(inv));
    if (!flagOpt(inv.values, 'wait')) {
      ctx.print(ctx.json ? json(job) : job.job_id);
      return 0;
    }
    if (!ctx.json) ctx.warn(`job ${job.job_id} ${job.status}`);
    return waitAndReport(ctx, job.job_id);
  },
};

/** The `jobs/create` params from the command line; k=v values are JSON when they parse. */
export function createParams(inv: Invocation): Record<string, unknown> {
  const { values } = inv;
  const engine = stringOpt(values, 'engine');
  if (engine === undefined) throw new UsageError('run needs --engine');
  return definedOnly({
    skill_id: arg(inv, 0),
    engine,
    execution_mode: stringOpt(values, 'mode'),
    input: mergedObject(values, 'input'),
    parameter: mergedObject(values, 'param'),
    model: stringOpt(values, 'model'),
    hard_timeout_sec: intOpt(values, 'timeout'),
  });
}

/** `--<name>-json` as the base, then each `--<name> k=v` on top; undefined when neither is given. */
function mergedObject(values: OptionValues, name: string): Record<string, unknown> | undefined {
  const text = stringOpt(values, `${name}-json`);
  const pairs = listOpt(values, name);
  if (text === undefined && pairs.length === 0) return undefined;
  return { ...(text === undefined ? {} : parseJsonObject(text, `--${name}-json`)), ...parseAssignments(pairs, name) };
}

/** Follows the job until it ends or waits for a reply, then prints its result. */
async function waitAndReport(ctx: Context, jobId: string): Promise<number> {
  const last = await followEvents(ctx.client, { job_id: jobId, after_seq: 0 }, (event) => {
    const data = event.data as { to?: string } | null;
    return event.type === 'finished' || (event.type === 'status_changed' && data?.to === 'waiting_user');
  });
  const result = await ctx.client.request<ResultView>('jobs/result', { job_id: jobId });
  if (last.type === 'finished') return reportResult(ctx, result);
  ctx.print(ctx.json ? json(result) : `job ${jobId} is waiting for input`);
  return 0;
}
