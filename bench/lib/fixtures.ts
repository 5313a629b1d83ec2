import { randomBytes, randomUUID } from 'node:crypto';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Job } from '../../daemon/model/job.js';
import { encodeFinishedJob } from '../../daemon/store/finished-log.js';
import { TEST_SKILLS } from './paths.js';

export type { Job };

/** A job id the way the daemon makes them: creation time in base 36, then randomness (sortable). */
function jobId(at: number): string {
  return `job-${at.toString(36).padStart(9, '0')}-${randomBytes(5).toString('hex')}`;
}

/**
 * The `i`th of `count` finished jobs created over the 30 days before `now`, oldest first: 80 %
 * succeeded, 15 % failed, 5 % canceled, spread evenly; a quarter interactive.
 */
export function finishedJob(i: number, count: number, skillIds: readonly string[], now: number): Job {
  const span = 30 * 24 * 3600 * 1000;
  const engines = ['codex', 'gemini', 'iflow'] as const;
  const created = now - span + Math.floor((i * span) / Math.max(count, 1));
  const pick = (i * 7919) % 100;
  const status = pick < 80 ? 'succeeded' : pick < 95 ? 'failed' : 'canceled';
  const interactive = i % 4 === 0;
  const engine = engines[i % 3] as Job['engine'];
  const started = created + 50;
  const finished = started + 5000 + (i % 60) * 1000;
  return {
    job_id: jobId(created),
    skill_id: skillIds[i % skillIds.length] as string,
    skill_version: '1.0.0',
    engine,
    execution_mode: interactive ? 'interactive' : 'auto',
    status,
    interactive_require_user_reply: true,
    session_timeout_sec: 1200,
    hard_timeout_sec: 3600,
    model: null,
    interactive_profile: interactive ? { kind: 'resumable', reason: 'generated history' } : null,
    attempt: interactive ? 2 : 1,
    max_attempt: interactive ? 3 : null,
    pending_interaction_id: null,
    wait_deadline_at: null,
    session_handle: { engine, handle_type: 'session_id', handle_value: randomUUID() },
    warnings: [],
    error:
      status === 'failed'
        ? { code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: fatal: engine crashed' }
        : status === 'canceled'
          ? { code: 'CANCELED_BY_USER', message: 'canceled by user' }
          : null,
    created_at: new Date(created).toISOString(),
    updated_at: new Date(finished).toISOString(),
    started_at: new Date(started).toISOString(),
    finished_at: new Date(finished).toISOString(),
  };
}

/**
 * Writes `count` finished jobs as `jobs-finished.ndjson` (one Job JSON per line, oldest first,
 * created over the 30 days before now), the way the daemon appends them. Returns their ids.
 */
export async function writeFinishedLog(path: string, count: number, skillIds: readonly string[]): Promise<string[]> {
  const now = Date.now();
  const jobs = Array.from({ length: count }, (_, i) => finishedJob(i, count, skillIds, now));
  await writeFile(path, jobs.length === 0 ? '' : `${jobs.map(encodeFinishedJob).join('\n')}\n`, { mode: 0o600 });
  return jobs.map((job) => job.job_id);
}

/**
 * Makes `count` skills in `dir`: `echo-auto` itself, then copies of it named bench-skill-001, …
 * (runner.json's id and name changed to match the folder). Returns the ids.
 */
export async function writeSkills(dir: string, count: number): Promise<string[]> {
  const template = join(TEST_SKILLS, 'echo-auto');
  const manifest = JSON.parse(await readFile(join(template, 'assets', 'runner.json'), 'utf8')) as Record<string, unknown>;
  const ids = ['echo-auto', ...Array.from({ length: Math.max(0, count - 1) }, (_, i) => `bench-skill-${String(i + 1).padStart(3, '0')}`)];
  for (const id of ids) {
    const target = join(dir, id);
    await cp(template, target, { recursive: true });
    await writeFile(join(target, 'assets', 'runner.json'), `${JSON.stringify({ ...manifest, id, name: id })}\n`);
  }
  return ids;
}
