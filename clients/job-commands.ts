import { RpcCallError } from '../rpc/client.js';
import { definedOnly, flagOpt, intOpt, stringOpt, UsageError } from './args.js';
import { JOB_STATUSES } from './choices.js';
import { arg, type Command } from './command.js';
import { jobDetails, jobTable, json, jsonLine } from './format.js';
import { resolveJobId } from './job-id.js';
import type { JobView, ResultView } from './wire.js';

/** `jobs`: jobs/list, newest first. */
export const jobsCommand: Command = {
  name: 'jobs',
  usage: 'jobs [--status S] [--skill ID] [--limit N] [--before JOB] [-q|--quiet] | jobs prune [--older-than DUR] [--status S] [--dry-run] [-f|--force]',
  summary: 'list jobs, newest first: how long ago each was created and how long it ran; prune removes finished jobs',
  options: {
    status: { type: 'string', value: 'S', description: 'only jobs in this status (prune: succeeded, failed or canceled)', choices: JOB_STATUSES },
    skill: { type: 'string', value: 'ID', description: 'only jobs of this skill', completes: 'skill' },
    limit: { type: 'string', value: 'N', description: 'at most N jobs (1 to 1000)', default: '50' },
    before: { type: 'string', value: 'JOB', description: 'only jobs created before this one (a short id will do): the next page, as the "more:" line names it' },
    quiet: { type: 'boolean', short: 'q', description: 'print only the job ids, one a line (for scripts)' },
    'older-than': { type: 'string', value: 'DUR', description: 'prune: jobs that finished longer ago than this (30d, 12h, 90m; 0s: all)' },
    'dry-run': { type: 'boolean', description: 'prune: list the jobs that would be removed, remove none' },
    force: { type: 'boolean', short: 'f', description: 'prune: remove without asking (scripts must say so)' },
  },
  positionals: [0, 1],
  argChoices: ['prune'],
  examples: ['jobs', 'jobs --status failed --limit 10', 'jobs --skill summarize-text --json', 'jobs -q --status waiting_user', 'jobs prune --dry-run  # what the retention policy removes next', 'jobs prune --older-than 7d --status failed -f'],
  details: [
    'CREATED is how long ago the job was created and DURATION how long it ran, from its start to its end (so far, for one still going; - when it never started). --json and show give the ISO times.',
    'jobs prune removes finished jobs with their events, results and run folders, as the daemon\'s retention policy does in the background (docs/retention.md): ' +
      'with --older-than or --status, the finished jobs they select; with neither, those the policy selects now. Waiting and running jobs are never removed. ' +
      'On a terminal it shows how many and asks; elsewhere it needs --force.',
  ],
  run: async (ctx, inv) => {
    const { values } = inv;
    if (inv.positionals[0] === 'prune') return (await import('./prune.js')).pruneJobs(ctx, values);
    if (inv.positionals.length > 0) throw new UsageError(`unknown jobs verb "${inv.positionals[0]}" (there is: prune)`);
    for (const name of ['older-than', 'dry-run', 'force'] as const) if (values[name] !== undefined) throw new UsageError(`--${name} goes with jobs prune`);
    const before = stringOpt(values, 'before');
    const params = definedOnly({
      status: stringOpt(values, 'status'),
      skill_id: stringOpt(values, 'skill'),
      limit: intOpt(values, 'limit'),
      before: before === undefined ? undefined : await resolveJobId(ctx.client, before),
    });
    const answer = await ctx.client.request<{ jobs: JobView[]; next: string | null }>('jobs/list', params);
    if (ctx.json) {
      ctx.print(json(answer));
      return 0;
    }
    if (flagOpt(values, 'quiet')) {
      for (const job of answer.jobs) ctx.print(job.job_id);
      return 0;
    }
    ctx.print(answer.jobs.length === 0 ? 'no jobs' : jobTable(answer.jobs, Date.now()));
    if (answer.next !== null && answer.next !== undefined) ctx.warn(`more: skillctl jobs --before ${answer.next}`);
    return 0;
  },
};

/** `show <job>`: jobs/get. */
export const showCommand: Command = {
  name: 'show',
  usage: 'show <job>',
  summary: 'show one job, every field (times in ISO form), and, finished, the connections its network refused',
  options: {},
  positionals: [1, 1],
  jobArg: 0,
  examples: ['show job-3f9c1d2e4b-0mhx2k9ab', 'show 3f9c1d2  # a unique start of the id will do', 'show 3f9c1d2 --json'],
  run: async (ctx, inv) => {
    const job = await ctx.client.request<JobView>('jobs/get', { job_id: arg(inv, 0) });
    ctx.print(ctx.json ? json(job) : [jobDetails(job), ...(await (await import('./refusals.js')).refusalLines(ctx.client, job))].join('\n'));
    return 0;
  },
};

/** `result <job>`: jobs/result; exit 0 when the job succeeded, 4 when it has not finished yet, else 1. */
export const resultCommand: Command = {
  name: 'result',
  usage: 'result <job>',
  summary: "print a job's output (exit 1 if it failed or was canceled, 4 if it has not finished yet)",
  options: {},
  positionals: [1, 1],
  jobArg: 0,
  examples: ['result 3f9c1d2', 'result 3f9c1d2 --json  # the whole jobs/result answer: status, output, artifacts, warnings, error'],
  details: ['The output goes to stdout as JSON; warnings, artifact paths and errors go to stderr.'],
  run: async (ctx, inv) => (await import('./report-result.js')).reportResult(ctx, await ctx.client.request<ResultView>('jobs/result', { job_id: arg(inv, 0) })),
};

/** `cancel <job>`: jobs/cancel; a job that already ended is not an error. */
export const cancelCommand: Command = {
  name: 'cancel',
  usage: 'cancel <job>',
  summary: 'cancel a job; it stops wherever it is (a job that already ended is left as it is, exit 0)',
  options: {},
  positionals: [1, 1],
  jobArg: 0,
  examples: ['cancel 3f9c1d2'],
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
  examples: ['call daemon/ping', 'call jobs/list \'{"status":"failed","limit":5}\''],
  details: ['The result goes to stdout as JSON; an error answer goes to stderr as the JSON-RPC error object, with exit 1. Job ids are sent as written: no short ids here.'],
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
      ctx.warn(jsonLine({ code: error.rpcCode, message: error.message, data }));
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
