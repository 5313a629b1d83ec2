import { ERROR_CODES, isErrorCode } from '../../rpc/errors.js';
import { ENGINE_NAMES, EXECUTION_MODES, type Job } from '../model/job.js';
import { JOB_STATUSES } from '../model/states.js';
import type { ProcessRecord } from './store.js';

/** A check of one stored value: null when it is fine, else what is wrong with it. */
type Check = (value: unknown) => string | null;

const is = (ok: (value: unknown) => boolean, what: string): Check => (value) => (ok(value) ? null : `is not ${what}`);
const text = is((v) => typeof v === 'string' && v !== '', 'a non-empty string');
const flag = is((v) => typeof v === 'boolean', 'a boolean');
const count = (min: number): Check => is((v) => Number.isSafeInteger(v) && (v as number) >= min, `an integer >= ${min}`);
const time = is((v) => typeof v === 'string' && !Number.isNaN(Date.parse(v)), 'a time');
const oneOf = (values: readonly string[], what: string): Check => is((v) => values.includes(v as string), what);
const orNull = (check: Check): Check => (value) => (value === null ? null : check(value));
const object = (fields: Record<string, Check>): Check => (value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object';
  for (const [key, check] of Object.entries(fields)) {
    const problem = check((value as Record<string, unknown>)[key]);
    if (problem !== null) return `${key} ${problem}`;
  }
  return null;
};
const listOf = (check: Check, what: string): Check => is((v) => Array.isArray(v) && v.every((item) => check(item) === null), what);
const codeOf = (kind: string): Check => is((v) => isErrorCode(v) && ERROR_CODES[v].kind === kind, `a ${kind} code`);

/** Every field of a stored job, checked by type and, for statuses, engines and codes, by value. */
const JOB_FIELDS: Record<keyof Job, Check> = {
  job_id: text,
  skill_id: text,
  skill_version: text,
  engine: oneOf(ENGINE_NAMES, 'a known engine'),
  execution_mode: oneOf(EXECUTION_MODES, 'an execution mode'),
  status: oneOf(JOB_STATUSES, 'a job status'),
  interactive_require_user_reply: flag,
  session_timeout_sec: count(1),
  hard_timeout_sec: count(1),
  model: orNull(text),
  approvals: (value) => (value === undefined ? null : oneOf(['auto', 'ask'], 'an approvals mode')(value)),
  interactive_profile: orNull(object({ kind: oneOf(['resumable', 'sticky_process'], 'a profile'), reason: is((v) => typeof v === 'string', 'a string') })),
  isolation: (value) => (value === undefined ? null : orNull(oneOf(['sandbox', 'none'], 'an isolation'))(value)),
  attempt: count(0),
  max_attempt: orNull(count(1)),
  pending_interaction_id: orNull(count(1)),
  wait_deadline_at: orNull(time),
  session_handle: orNull(object({ engine: oneOf(ENGINE_NAMES, 'a known engine'), handle_type: oneOf(['session_id'], 'a handle type'), handle_value: text })),
  warnings: listOf(codeOf('warning'), 'a list of warning codes'),
  error: orNull(object({ code: codeOf('job'), message: is((v) => typeof v === 'string', 'a string') })),
  owner: (value) => (value === undefined ? null : object({ uid: count(0), user: text })(value)),
  share_with: (value) => (value === undefined ? null : listOf(text, 'a list of user: and group: entries')(value)),
  scripted_model: (value) => (value === undefined ? null : text(value)),
  usage: (value) => (value === undefined ? null : object({ input_tokens: count(0), output_tokens: count(0), cached_input_tokens: count(0), requests: count(0) })(value)),
  created_at: time,
  updated_at: time,
  started_at: orNull(time),
  finished_at: orNull(time),
};

const checkJob = object(JOB_FIELDS);
const checkProcess = object({ job_id: text, pid: count(1), pgid: count(1), start_time: text });

/** What is wrong with a stored job (kept under `key`), or null when it can be loaded as it is. */
export function jobProblem(value: unknown, key?: string): string | null {
  const problem = checkJob(value);
  if (problem !== null) return `job ${problem}`;
  if (key !== undefined && (value as Job).job_id !== key) return `job_id ${(value as Job).job_id} is stored under ${key}`;
  return null;
}

/** What is wrong with a stored engine process record, or null. */
export function processProblem(value: unknown, key?: string): string | null {
  const problem = checkProcess(value);
  if (problem !== null) return `process record ${problem}`;
  if (key !== undefined && String((value as ProcessRecord).pid) !== key) return `process record of pid ${(value as ProcessRecord).pid} is stored under ${key}`;
  return null;
}
