import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../base/config.js';
import { ENGINES } from '../engines/registry.js';
import type { Logger } from '../base/logger.js';
import type { Spawner } from '../process/spawn.js';
import type { JobSandbox } from '../sandbox/job-sandbox.js';
import type { SkillDefinition } from '../skills/manifest.js';
import type { JobDocs } from '../store/job-docs.js';
import type { ProcessRecord, Store } from '../store/store.js';
import { decideTurn } from './gate.js';
import type { GateDecision } from '../model/gate.js';
import type { Histories } from './histories.js';
import type { Job, JobError } from '../model/job.js';
import type { JobBases } from './job-bases.js';
import type { RunFolder } from '../model/run-folder.js';
import { planTurn, type TurnPlan } from './turn-plan.js';
import type { TurnReport } from './turn.js';

/** Makes the attempt's folder, where its logs go, with the prompt the turn is given. */
export async function startAttempt(folder: RunFolder, attempt: number, prompt: string): Promise<void> {
  await mkdir(folder.attemptDir(attempt), { recursive: true });
  await writeFile(join(folder.attemptDir(attempt), 'prompt.txt'), prompt, 'utf8');
}

/** What the start of a turn reads. */
export interface TurnStartDeps {
  docs: JobDocs;
  bases: JobBases;
  histories: Histories;
  config: Pick<Config, 'engines'>;
  sandbox: Pick<JobSandbox, 'refusal'>;
}

/**
 * What a queued job's next turn runs, with the skill its output is checked against; or the
 * error that fails the job instead (no session to resume, a prompt the engine cannot take, no
 * sandbox where one is required). The run folder is made on this host first.
 */
export async function prepareTurn(job: Job, folder: RunFolder, d: TurnStartDeps): Promise<{ skill: SkillDefinition; plan: TurnPlan } | JobError> {
  await d.docs.prepare(job);
  const { skill, request } = await d.bases.of(job);
  const history = job.execution_mode === 'interactive' ? await d.histories.read(job.job_id) : [];
  const plan = planTurn({ job, skill, adapter: ENGINES[job.engine], command: d.config.engines[job.engine].command, folder, request, history });
  if ('code' in plan) return plan;
  const refused = d.sandbox.refusal();
  // A job that began in a sandbox goes on in one, and fails to start where none can run.
  if (refused !== null && job.isolation !== 'sandbox') return { code: 'ENGINE_SPAWN_FAILED', message: refused.message };
  return { skill, plan };
}

/** The gate's decision on a finished turn, and the session handle the job keeps. */
export function decideReport(job: Job, report: TurnReport, skill: SkillDefinition): { decision: GateDecision; session_handle: Job['session_handle'] } {
  const decision = decideTurn({
    mode: job.execution_mode,
    process: report.outcome,
    messages: report.parsed.messages,
    validateOutput: skill.validators.output ?? (() => []),
    attempt: job.attempt,
    maxAttempt: job.max_attempt,
    sessionId: report.parsed.sessionId,
    waitNeedsSession: job.interactive_profile?.kind !== 'sticky_process',
  });
  const session_handle = report.parsed.sessionId === null ? job.session_handle : { engine: job.engine, handle_type: 'session_id' as const, handle_value: report.parsed.sessionId };
  return { decision, session_handle };
}

/**
 * Restart recovery: what the daemon before left running is stopped, and its records dropped,
 * except for the jobs whose engine processes were taken up (`stopping` says no); and whatever
 * process is marked with one of `unrecorded` (jobs whose engine was stored as never started: a
 * crash between its spawn and its record leaves one).
 */
export async function stopLeftovers(store: Store, spawner: Spawner, logger: Logger, left: readonly ProcessRecord[], stopping: (jobId: string) => boolean, unrecorded: ReadonlySet<string> = new Set()): Promise<void> {
  const records = left.filter((record) => stopping(record.job_id));
  const known = new Set<string>(unrecorded);
  for (const { job_id } of records) if (await store.hasJob(job_id)) known.add(job_id);
  // Nothing of theirs to stop (every engine was taken up): no need to read every process's /proc.
  if (known.size === 0) {
    for (const record of records) await store.removeProcess(record.pid);
    return;
  }
  const survivors = await spawner.stopSurvivors(records, (jobId) => known.has(jobId));
  for (const s of survivors.records) logger.warn({ job_id: s.job_id, pid: s.pid }, 'stopped an engine process left from before the restart');
  for (const s of survivors.strays) logger.warn({ job_id: s.job_id, pid: s.pid }, 'stopped a process of the job left from before the restart');
  for (const c of survivors.cgroups) logger.warn({ job_id: c.job_id, cgroup: c.path }, 'stopped and removed a cgroup of the job left from before the restart');
  for (const record of records) await store.removeProcess(record.pid);
}
