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

/** The daemon will not make test jobs (`scripted_model`) at all: its message says why. */
export class ScriptedModelRefused extends Error {}

/**
 * Runs one case as a job of the daemon: creates it, answers each question with the case's next
 * reply until it ends or waits with no reply left, then compares. `model` must be the one the
 * scripted server answers with while this runs; `scriptedModel` its address, for a daemon whose
 * engines are not already pointed at it (a daemon of the user's: the job is a test job).
 */
export async function runCase(client: RpcClient, skillId: string, planned: PlannedCase, model: CaseModel, scriptedModel: string | null, onCreated: (jobId: string) => void = () => undefined): Promise<CaseResult> {
  const { testCase, engine, mode } = planned;
  let jobId: string;
  try {
    const params = { skill_id: skillId, engine, execution_mode: mode, input: testCase.input, parameter: testCase.parameters, ...(scriptedModel === null ? {} : { scripted_model: scriptedModel }) };
    jobId = (await client.request<{ job_id: string }>('jobs/create', params)).job_id;
    onCreated(jobId);
  } catch (error) {
    if (!(error instanceof RpcCallError)) throw error;
    if (isScriptedModelRefusal(error)) throw new ScriptedModelRefused(`takes no test jobs (${error.message})`);
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
  // Paths in the job's run folder, wherever the daemon keeps it: named from its artifacts folder.
  const inArtifacts = `/${jobId}/workspace/artifacts/`;
  const artifacts = result.artifacts.map((path) => (path.includes(inArtifacts) ? path.slice(path.indexOf(inArtifacts) + inArtifacts.length) : path)).sort();
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

/** The daemon's answer to `scripted_model` itself (a shared store; an older daemon's unknown field), not to the case. */
function isScriptedModelRefusal(error: RpcCallError): boolean {
  if (error.dataCode !== 'INVALID_PARAMS') return false;
  return (error.details as { field?: unknown } | undefined)?.field === 'scripted_model' || error.message.includes('unknown field "scripted_model"');
}
