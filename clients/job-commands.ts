import { RpcCallError } from '../rpc/client.js';
import { definedOnly, intOpt, stringOpt, UsageError } from './args.js';
import { colourOn, paintStatus } from './colour.js';
import { arg, type Command, type Context } from './command.js';
import { errorText, jobDetails, jobTable, json } from './format.js';
import { TERMINAL_STATUSES, type JobView, type ResultView } from './wire.js';

/** `jobs`: jobs/list, newest first. */
export const jobsCommand: Command = {
  name: 'jobs',
  usage: 'jobs [--status S] [--skill ID] [--limit N] [--before JOB]',
  summary: 'list jobs, newest first',
  options: { status: { type: 'string' }, skill: { type: 'string' }, limit: { type: 'string' }, before: { type: 'string' } },
  positionals: [0, 0],
  run: async (ctx, inv) => {
    const { values } = inv;
    const params = definedOnly({ status: stringOpt(values, 'status'), skill_id: stringOpt(values, 'skill'), limit: intOpt(values, 'limit'), before: stringOpt(values, 'before') });
    const answer = await ctx.client.request<{ jobs: JobView[]; next: string | null }>('jobs/list', params);
    if (ctx.json) {
      ctx.print(json(answer));
      return 0;
    }
    ctx.print(answer.jobs.length === 0 ? 'no jobs' : jobTable(answer.jobs));
    if (answer.next !== null && answer.next !== undefined) ctx.warn(`more: skillctl jobs --before ${answer.next}`);
    return 0;
  },
};

/** `show <job>`: jobs/get. */
export const showCommand: Command = {
  name: 'show',
  usage: 'show <job>',
  summary: 'show one job',
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const job = await ctx.client.request<JobView>('jobs/get', { job_id: arg(inv, 0) });
    ctx.print(ctx.json ? json(job) : jobDetails(job));
    return 0;
  },
};

/** `result <job>`: jobs/result; exit 1 unless the job succeeded. */
export const resultCommand: Command = {
  name: 'result',
  usage: 'result <job>',
  summary: "print a job's output (exit 1 if it failed, was canceled or has not finished)",
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => reportResult(ctx, await ctx.client.request<ResultView>('jobs/result', { job_id: arg(inv, 0) })),
};

/**
 * Prints a job result: the output as JSON on stdout (the whole result with `--json`), notes and
 * errors on stderr. Resolves to 0 for a succeeded job, 1 otherwise.
 */
export function reportResult(ctx: Context, result: ResultView): number {
  if (ctx.json) ctx.print(json(result));
  if (result.status === 'succeeded') {
    if (!ctx.json) ctx.print(json(result.output));
    for (const warning of result.warnings) ctx.warn(`skillctl: warning: ${warning}`);
    if (!ctx.json) for (const artifact of result.artifacts) ctx.warn(`artifact: ${artifact}`);
    return 0;
  }
  const colour = colourOn(process.stderr);
  if (!TERMINAL_STATUSES.includes(result.status)) ctx.warn(`skillctl: job ${result.job_id} is ${paintStatus(result.status, result.status, colour)}; no result yet`);
  else ctx.warn(`skillctl: ${paintStatus(result.error === null ? `job ${result.status}` : errorText(result.error), result.status, colour)}`);
  return 1;
}

/** `cancel <job>`: jobs/cancel; a job that already ended is not an error. */
export const cancelCommand: Command = {
  name: 'cancel',
  usage: 'cancel <job>',
  summary: 'cancel a job',
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => {
    const answer = await ctx.client.request<{ job_id: string; status: string; accepted: boolean }>('jobs/cancel', { job_id: arg(inv, 0) });
    if (ctx.json) ctx.print(json(answer));
    else ctx.print(answer.accepted ? `job ${answer.job_id} ${answer.status}` : `job ${answer.job_id} had already ended: ${answer.status}`);
    return 0;
  },
};

/** `call <method> [json-params]`: one raw request; the result on stdout, an error answer as JSON on stderr. */
export const callCommand: Command = {
  name: 'call',
  usage: 'call <method> [json-params]',
  summary: 'send one raw JSON-RPC request and print the result',
  options: {},
  positionals: [1, 2],
  run: async (ctx, inv) => {
    const text = inv.positionals[1];
    const params = text === undefined ? undefined : parseParams(text);
    try {
      const result = await ctx.client.request(arg(inv, 0), params);
      ctx.print(json(result));
      return 0;
    } catch (error) {
      if (!(error instanceof RpcCallError)) throw error;
      const data = error.details === undefined ? { code: error.dataCode } : { code: error.dataCode, details: error.details };
      ctx.warn(JSON.stringify({ code: error.rpcCode, message: error.message, data }));
      return 1;
    }
  },
};

function parseParams(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`json-params is not valid JSON: ${(error as Error).message}`);
  }
}
