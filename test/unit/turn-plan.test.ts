import t from 'tap';
import { SkilldError } from '../../rpc/errors.js';
import { ENGINES } from '../../daemon/engines/registry.js';
import type { Interaction } from '../../daemon/model/interactions.js';
import type { EngineName, Job, ProfileKind } from '../../daemon/model/job.js';
import { RunFolder } from '../../daemon/model/run-folder.js';
import { checkFirstPrompt, checkReply, planTurn, type TurnPlan } from '../../daemon/jobs/turn-plan.js';

const COMMAND = ['/usr/bin/engine'];
const SKILL = { id: 'echo', version: '1.0.0', prompts: {}, input_paths: {}, limits: {}, network_allow: [] };
const FOLDER = new RunFolder('/runs', 'job-1');
const BIG = `--${'x'.repeat(200_000)}`;

function job(engine: EngineName, patch: Partial<Job> = {}, profile: ProfileKind = 'resumable'): Job {
  return {
    job_id: 'job-1',
    skill_id: 'echo',
    skill_version: '1.0.0',
    engine,
    execution_mode: 'interactive',
    status: 'queued',
    interactive_require_user_reply: true,
    session_timeout_sec: 60,
    hard_timeout_sec: 60,
    model: null,
    interactive_profile: { kind: profile, reason: 'test' },
    attempt: 0,
    max_attempt: 3,
    pending_interaction_id: null,
    wait_deadline_at: null,
    session_handle: null,
    warnings: [],
    error: null,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    ...patch,
  };
}

function replied(response: unknown): Interaction[] {
  return [{ interaction_id: 1, prompt: 'Which city?', kind: 'open_text', response, resolution_mode: 'user_reply', asked_at: 'a', replied_at: 'b', idempotency_key: null }];
}

function plan(j: Job, input: Record<string, unknown> = {}, history: Interaction[] = []): TurnPlan | { code: string; message: string } {
  return planTurn({ job: j, skill: SKILL, folder: FOLDER, request: { input, parameter: {} }, adapter: ENGINES[j.engine], command: COMMAND, history });
}

const resumed = (engine: EngineName, profile: ProfileKind = 'resumable'): Job => job(engine, { attempt: 1, session_handle: { engine, handle_type: 'session_id', handle_value: 'S-1' } }, profile);

t.test('a first prompt goes on stdin, however small, for an engine that reads it there; iflow gets it as an argument', async (t) => {
  const p = plan(job('gemini'), { city: '--help' }) as TurnPlan;
  t.equal(p.stdin, p.prompt);
  t.same(p.argv, [...COMMAND, '--yolo', '--output-format', 'json']);
  t.match(p.prompt, /- city: "--help"/);
  const i = plan(job('iflow'), { city: '--help' }) as TurnPlan;
  t.equal(i.stdin, null);
  t.same(i.argv, [...COMMAND, '--yolo', '--thinking', `--prompt=${i.prompt}`]);
});

t.test('a first prompt too large for an argument goes on stdin for codex and gemini', async (t) => {
  const c = plan(job('codex'), { big: BIG }) as TurnPlan;
  t.equal(c.stdin, c.prompt);
  t.same(c.argv, [...COMMAND, 'exec', '--skip-git-repo-check', '--json', '--yolo', '--', '-']);
  const g = plan(job('gemini'), { big: BIG }) as TurnPlan;
  t.equal(g.stdin, g.prompt);
  t.same(g.argv, [...COMMAND, '--yolo', '--output-format', 'json']);
});

t.test('a reply is the resumed turn\'s prompt, on stdin', async (t) => {
  t.same(plan(resumed('codex'), {}, replied('Rome')), { prompt: 'Rome', argv: [...COMMAND, 'exec', 'resume', '--skip-git-repo-check', '--json', '--yolo', '--', 'S-1', '-'], stdin: 'Rome', resuming: true, paths: [], limits: {}, allow: [] });
  t.same(plan(resumed('gemini'), {}, replied(BIG)), { prompt: BIG, argv: [...COMMAND, '--resume=S-1', '--yolo', '--output-format', 'json'], stdin: BIG, resuming: true, paths: [], limits: {}, allow: [] });
});

t.test('a model stored by an older version that looks like an option still cannot be read as one', async (t) => {
  const p = plan(job('codex', { model: '--version' })) as TurnPlan;
  t.ok(p.argv.includes('--model=--version'));
  t.notOk(p.argv.includes('--version'));
});

t.test('a turn that cannot reach the engine is a job error, never an argv the OS refuses', async (t) => {
  t.match(plan(job('iflow'), { big: BIG }), { code: 'JOB_INTERNAL_ERROR', message: /^the first prompt cannot reach iflow: iflow takes at most 102400 bytes/ });
  for (const engine of ['codex', 'iflow'] as const) t.notMatch(plan(job(engine, {}, 'sticky_process'), { big: BIG }), { code: String }, `${engine}: a live session takes it as a message of its protocol`);
  t.match(plan(resumed('iflow'), {}, replied(BIG)), { code: 'SESSION_RESUME_FAILED', message: /^the reply cannot reach iflow/ });
  t.same(plan(job('codex', { attempt: 1 }), {}, replied('x')), { code: 'SESSION_RESUME_FAILED', message: 'no stored session handle or reply to resume with' });
});

t.test('checkFirstPrompt and checkReply refuse up front with INVALID_PARAMS what planTurn could not deliver', async (t) => {
  const refused = (fn: () => void): SkilldError => {
    try {
      fn();
    } catch (error) {
      if (error instanceof SkilldError) return error;
      throw error;
    }
    throw new Error('not refused');
  };
  const first = refused(() => checkFirstPrompt({ job: job('iflow'), skill: SKILL, folder: FOLDER, request: { input: { big: BIG }, parameter: {} } }));
  t.equal(first.code, 'INVALID_PARAMS');
  t.match(first.message, /^input and parameter make a first prompt that cannot reach iflow: iflow takes at most 102400 bytes/);
  const reply = refused(() => checkReply(resumed('iflow'), BIG));
  t.equal(reply.code, 'INVALID_PARAMS');
  t.match(reply.details, { path: '/response', message: /at most 102400 bytes/ });
  t.equal(refused(() => checkReply(resumed('gemini'), '')).code, 'INVALID_PARAMS', 'gemini: an empty reply');
  t.doesNotThrow(() => checkReply(resumed('codex'), BIG), 'codex reads it on stdin');
  t.doesNotThrow(() => checkReply(resumed('iflow', 'sticky_process'), BIG), 'a sticky reply is a stdin line');
  t.doesNotThrow(() => checkFirstPrompt({ job: job('codex'), skill: SKILL, folder: FOLDER, request: { input: { big: BIG }, parameter: {} } }));
});

t.test('the paths the input names that the skill declares (input_paths) go with every turn, for its sandbox', async (t) => {
  const skill = { ...SKILL, input_paths: { repository: 'read_only', out: 'read_write', missing: 'read_only' } as const };
  const input = { repository: '/srv/repo', out: '/srv/out', other: '/etc' };
  const first = planTurn({ job: job('codex'), skill, folder: FOLDER, request: { input, parameter: {} }, adapter: ENGINES.codex, command: COMMAND, history: [] });
  t.same('paths' in first ? first.paths : null, [
    { name: 'repository', path: '/srv/repo', access: 'read_only' },
    { name: 'out', path: '/srv/out', access: 'read_write' },
  ], 'an absent input names none; an undeclared one is not a path');
  const later = planTurn({ job: resumed('codex'), skill, folder: FOLDER, request: { input, parameter: {} }, adapter: ENGINES.codex, command: COMMAND, history: replied('Rome') });
  t.same('paths' in later ? later.paths : null, 'paths' in first ? first.paths : null, 'the resumed turn too');
});
