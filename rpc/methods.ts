import { Ajv, type ErrorObject } from 'ajv';
import { SkilldError } from './errors.js';
import { fieldName, type MethodHandler } from './dispatcher.js';

const jobId = { type: 'string', minLength: 1, maxLength: 200 };
const status = { enum: ['queued', 'running', 'waiting_user', 'succeeded', 'failed', 'canceled'] };
const none = { type: 'object', additionalProperties: false, properties: {} };
const byJob = { type: 'object', additionalProperties: false, required: ['job_id'], properties: { job_id: jobId } };

/**
 * A model name reaches an engine's command line: it starts with a letter or digit (never `-`),
 * then letters, digits and `._:/@+-`, 128 characters at most.
 */
const MODEL_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$';

/** A `share_with` or `access.admins` entry: `user:<name>` or `group:<name>`, a name as the system's tools allow it. */
export const SHARE_ENTRY_PATTERN = '^(user|group):([A-Za-z0-9._][A-Za-z0-9._-]{0,63}\\$?)$';

/** A scripted model's address: plain HTTP on 127.0.0.1, a port, nothing after it. */
export const SCRIPTED_MODEL_PATTERN = '^http://127\\.0\\.0\\.1:[0-9]{1,5}/?$';

/**
 * The longest wait or turn a job may have, in seconds: a year (365 days). A person may answer
 * days later; the bound keeps every deadline a date the daemon can store and arm.
 */
export const MAX_TIMEOUT_SEC = 365 * 24 * 60 * 60;

export { PROTOCOL_VERSION } from './protocol-version.js';

/** Every method and the JSON Schema of its params (docs/protocol.md, "Methods"). Unknown keys are refused: typos surface. */
export const METHOD_PARAMS = {
  'daemon/ping': none,
  'daemon/status': none,
  'daemon/hosts': none,
  'daemon/stop': { type: 'object', additionalProperties: false, properties: { engines: { enum: ['keep', 'stop'] } } },
  'skills/list': none,
  'skills/get': { type: 'object', additionalProperties: false, required: ['skill_id'], properties: { skill_id: { type: 'string', minLength: 1 } } },
  'skills/subscribe': none,
  'engines/list': none,
  'jobs/create': {
    type: 'object',
    additionalProperties: false,
    required: ['skill_id'],
    properties: {
      skill_id: { type: 'string', minLength: 1 },
      engine: { type: 'string', minLength: 1 },
      execution_mode: { enum: ['auto', 'interactive'] },
      interactive_require_user_reply: { type: 'boolean' },
      session_timeout_sec: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_SEC },
      hard_timeout_sec: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_SEC },
      input: { type: 'object' },
      parameter: { type: 'object' },
      model: { type: 'string', pattern: MODEL_PATTERN },
      approvals: { enum: ['auto', 'ask'] },
      // Each must name a user or group of the host (docs/access.md).
      share_with: { type: 'array', maxItems: 64, uniqueItems: true, items: { type: 'string', pattern: SHARE_ENTRY_PATTERN } },
      // A test job's scripted model on this host's loopback (docs/skills.md); its port is checked by the daemon.
      scripted_model: { type: 'string', pattern: SCRIPTED_MODEL_PATTERN },
    },
  },
  'jobs/get': byJob,
  'jobs/list': {
    type: 'object',
    additionalProperties: false,
    properties: { status, skill_id: { type: 'string' }, id_prefix: jobId, limit: { type: 'integer', minimum: 1, maximum: 1000 }, before: jobId },
  },
  'jobs/retry': byJob,
  'jobs/cancel': byJob,
  'jobs/pending': byJob,
  'jobs/reply': {
    type: 'object',
    additionalProperties: false,
    required: ['job_id', 'interaction_id', 'response'],
    properties: { job_id: jobId, interaction_id: { type: 'integer', minimum: 1 }, response: {}, idempotency_key: { type: 'string', minLength: 1, maxLength: 200 } },
  },
  'jobs/history': {
    type: 'object',
    additionalProperties: false,
    required: ['job_id'],
    properties: { job_id: jobId, after: { type: 'integer', minimum: 0 } },
  },
  'jobs/result': byJob,
  'jobs/logs': {
    type: 'object',
    additionalProperties: false,
    required: ['job_id'],
    properties: { job_id: jobId, attempt: { type: 'integer', minimum: 1 }, stream: { enum: ['stdout', 'stderr'] }, offset: { type: 'integer', minimum: 0 }, format: { enum: ['raw', 'text'] } },
  },
  'jobs/remove': {
    type: 'object',
    additionalProperties: false,
    required: ['job_ids'],
    properties: { job_ids: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: jobId }, force: { type: 'boolean' } },
  },
  'jobs/prune': {
    type: 'object',
    additionalProperties: false,
    properties: {
      older_than_sec: { type: 'integer', minimum: 0, maximum: 100 * MAX_TIMEOUT_SEC },
      status: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['succeeded', 'failed', 'canceled'] } },
      dry_run: { type: 'boolean' },
    },
  },
  'jobs/artifact': {
    type: 'object',
    additionalProperties: false,
    required: ['job_id', 'path'],
    properties: { job_id: jobId, path: { type: 'string', minLength: 1, maxLength: 4096 }, offset: { type: 'integer', minimum: 0 } },
  },
  'jobs/subscribe': { type: 'object', additionalProperties: false, properties: { job_id: jobId, after_seq: { type: 'integer', minimum: 0 } } },
  'jobs/unsubscribe': { type: 'object', additionalProperties: false, required: ['subscription_id'], properties: { subscription_id: { type: 'string', minLength: 1 } } },
  'notify/log': { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 200 } } },
} as const;

export type MethodName = keyof typeof METHOD_PARAMS;

let ajv: Ajv | null = null;
const validators = new Map<MethodName, (value: unknown) => boolean>();

/** A method's params validator, compiled at its first call: compiling them all cost every start (the daemon's, skillctl's) 50 ms. */
function validatorOf(name: MethodName): (value: unknown) => boolean {
  let validate = validators.get(name);
  if (validate === undefined) {
    ajv ??= new Ajv({ allErrors: false, strict: true });
    validate = ajv.compile(METHOD_PARAMS[name]);
    validators.set(name, validate);
  }
  return validate;
}

/**
 * Wraps each implementation so that it only ever sees params that passed its schema; a missing
 * `params` counts as `{}`. Bad params get INVALID_PARAMS naming the field.
 */
export function bindMethods<C>(impl: Record<MethodName, MethodHandler<C>>): Record<string, MethodHandler<C>> {
  const bound: Record<string, MethodHandler<C>> = {};
  for (const name of Object.keys(METHOD_PARAMS) as MethodName[]) {
    bound[name] = (params, context) => {
      const value = params ?? {};
      const validate = validatorOf(name);
      if (!validate(value)) {
        const error = (validate as unknown as { errors: ErrorObject[] }).errors[0];
        throw new SkilldError('INVALID_PARAMS', `invalid params for ${name}: ${describe(error)}`, { details: { path: error?.instancePath ?? '', message: error?.message ?? '' } });
      }
      return impl[name](value, context);
    };
  }
  return bound;
}

function describe(error: ErrorObject | undefined): string {
  if (error === undefined) return 'invalid';
  if (error.keyword === 'additionalProperties') return `unknown field "${String(error.params['additionalProperty'])}"`;
  if (error.keyword === 'required') return `missing field "${String(error.params['missingProperty'])}"`;
  return `${fieldName(error.instancePath)} ${error.message ?? 'is invalid'}`;
}
