import { join } from 'node:path';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';
import { differences, type CaseOutcome, type Difference } from './case-check.js';
import type { CaseModel } from './case-model.js';
import type { PlannedCase } from './case-plan.js';
import { nextStop } from './job-wait.js';

/** How one case went: its job, how the job ended, and what differed from the case's `expect` (nothing: it passed). */
export interface CaseResult {
  planned: PlannedCase;
  /** Null when the daemon refused the job (its error is the outcome's). */
  jobId: string | null;
  outcome: CaseOutcome;
  differences: Difference[];
}

interface JobResult {
  status: string;
  output: unknown;
  artifacts: string[];
  error: { code: string; message: string } | null;
}

/**
 * Runs one case as a job of the daemon: creates it, answers each question with the case's next
 * reply until it ends or waits with no reply left, then compares. `model` must be the one the
 * scripted server answers with while this runs; `runsDir` is the daemon's `runs/` folder.
 */
export async function runCase(client: RpcClient, skillId: string, planned: PlannedCase, model: CaseModel, runsDir: string): Promise<CaseResult> {
  const { testCase, engine, mode } = planned;
  let jobId: string;
  try {
    const params = { skill_id: skillId, engine, execution_mode: mode, input: testCase.input, parameter: testCase.parameters };
    jobId = (await client.request<{ job_id: string }>('jobs/create', params)).job_id;
  } catch (error) {
    if (!(error instanceof RpcCallError)) throw error;
    const outcome = { status: 'failed', output: null, error: { code: error.dataCode, message: error.message }, artifacts: [] };
    return { planned, jobId: null, outcome, differences: differences(testCase.expect, outcome) };
  }
  let after = 0;
  let used = 0;
  for (;;) {
    const job = await nextStop(client, jobId, after);
    if (job.status !== 'waiting_user' || used === testCase.replies.length) break;
    after = job.pending_interaction_id ?? after;
    await client.request('jobs/reply', { job_id: jobId, interaction_id: after, response: testCase.replies[used] });
    used += 1;
  }
  const result = await client.request<JobResult>('jobs/result', { job_id: jobId });
  if (result.status === 'waiting_user') await client.request('jobs/cancel', { job_id: jobId }).catch(() => undefined);
  const artifactsDir = join(runsDir, jobId, 'workspace', 'artifacts');
  const artifacts = result.artifacts.map((path) => (path.startsWith(`${artifactsDir}/`) ? path.slice(artifactsDir.length + 1) : path)).sort();
  const outcome: CaseOutcome = { status: result.status, output: result.output, error: result.error, artifacts };
  return { planned, jobId, outcome, differences: [...differences(testCase.expect, outcome), ...scriptDifferences(planned, model, used)] };
}

/** Where the run and the case's script parted: the engine asked for more turns, or a reply was never asked for. */
function scriptDifferences(planned: PlannedCase, model: CaseModel, used: number): Difference[] {
  const found: Difference[] = [];
  const turns = planned.testCase.model.length;
  const [overrun] = model.overruns;
  if (overrun !== undefined) found.push({ path: 'model', expected: `${turns} turn${turns === 1 ? '' : 's'}`, actual: `the engine asked for turn ${overrun}` });
  const replies = planned.testCase.replies.length;
  if (used < replies) found.push({ path: 'replies', expected: `${replies} asked for`, actual: `${used} asked for` });
  return found;
}
