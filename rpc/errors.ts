/**
 * The single registry of stable error codes. Clients branch on these strings; a code is never
 * renamed or reused. README's error table is checked against this object by a test.
 */

/** Where a code appears: a request error, a job failure, a job warning, or a skill's load error. */
export type CodeKind = 'request' | 'job' | 'warning' | 'skill';

interface CodeInfo {
  readonly rpc: number;
  readonly kind: CodeKind;
  readonly retryable: boolean;
  readonly meaning: string;
}

export const ERROR_CODES = {
  PARSE_ERROR: { rpc: -32700, kind: 'request', retryable: false, meaning: 'The line is not valid JSON.' },
  INVALID_REQUEST: { rpc: -32600, kind: 'request', retryable: false, meaning: 'The message is not a JSON-RPC 2.0 request.' },
  REQUEST_TOO_LARGE: { rpc: -32600, kind: 'request', retryable: false, meaning: 'A request line exceeded 1 MiB (the daemon then closes the connection; skillctl refuses such a request unsent), or a message to skillctl mcp exceeded 10 MiB.' },
  BATCH_TOO_LARGE: { rpc: -32600, kind: 'request', retryable: false, meaning: 'A batch held more than 1,000 requests; none of them ran.' },
  METHOD_NOT_FOUND: { rpc: -32601, kind: 'request', retryable: false, meaning: 'No such method.' },
  INVALID_PARAMS: { rpc: -32602, kind: 'request', retryable: false, meaning: 'The params do not match the method; details name the field.' },
  INTERNAL_ERROR: { rpc: -32603, kind: 'request', retryable: true, meaning: 'The daemon hit an unexpected error; it is logged.' },
  SKILL_NOT_FOUND: { rpc: 1001, kind: 'request', retryable: false, meaning: 'No skill with that id is loaded.' },
  SKILL_INVALID: { rpc: 1002, kind: 'request', retryable: true, meaning: 'The skill has never loaded successfully; its error says why.' },
  ENGINE_UNKNOWN: { rpc: 1003, kind: 'request', retryable: false, meaning: 'The engine is not one the daemon knows.' },
  SKILL_ENGINE_UNSUPPORTED: { rpc: 1004, kind: 'request', retryable: false, meaning: "The engine is not in the skill's effective engines." },
  SKILL_EXECUTION_MODE_UNSUPPORTED: { rpc: 1005, kind: 'request', retryable: false, meaning: "The mode is not in the skill's execution_modes." },
  INPUT_INVALID: { rpc: 1006, kind: 'request', retryable: false, meaning: "input or parameter does not match the skill's schema, or a path input (`input_paths`) names no absolute existing path or one of the daemon's own places; details list the errors." },
  ENGINE_UNAVAILABLE: { rpc: 1007, kind: 'request', retryable: false, meaning: 'The engine cannot run jobs on this daemon as it is set up (Claude Code as root without a sandbox); the message says what would change it.' },
  NOT_PERMITTED: { rpc: 1008, kind: 'request', retryable: false, meaning: 'The caller may not do this: `daemon/stop` and `notify/log` are for administrators where access is "owner" (docs/access.md).' },
  JOB_NOT_FOUND: { rpc: 2001, kind: 'request', retryable: false, meaning: 'No job with that id, or none the caller may see (docs/access.md).' },
  JOB_NOT_INTERACTIVE: { rpc: 2002, kind: 'request', retryable: false, meaning: 'The job runs in auto mode; it takes no replies.' },
  JOB_NOT_WAITING: { rpc: 2003, kind: 'request', retryable: false, meaning: 'The job is not waiting for a reply.' },
  INTERACTION_STALE: { rpc: 2004, kind: 'request', retryable: false, meaning: 'The interaction_id is not the pending one.' },
  IDEMPOTENCY_CONFLICT: { rpc: 2005, kind: 'request', retryable: false, meaning: 'The idempotency_key was used with another response.' },
  JOB_NOT_FINISHED: { rpc: 2006, kind: 'request', retryable: false, meaning: 'jobs/retry or jobs/remove names a job that has not finished; cancel it or wait for it (jobs/remove: or `force`).' },
  ARTIFACT_NOT_FOUND: { rpc: 2007, kind: 'request', retryable: false, meaning: "jobs/artifact names no file of the job's artifacts folder (or one that leads out of it); details say which path and why." },
  QUEUE_FULL: { rpc: 3001, kind: 'request', retryable: true, meaning: 'max_queue jobs are already queued.' },
  RESPONSE_TOO_LARGE: { rpc: 3002, kind: 'request', retryable: false, meaning: 'The answer would exceed 8 MiB; ask for less at a time or send a smaller batch.' },
  SERVER_BUSY: { rpc: 3003, kind: 'request', retryable: true, meaning: 'max_connections clients are connected, each busy (or this connection, with nothing in progress, was closed to make room for a new one), or unfinished request lines hold the shared buffer; the connection is closed.' },
  STORAGE_UNAVAILABLE: { rpc: 3004, kind: 'request', retryable: true, meaning: 'The state could not be written (disk full, I/O error, database unreachable); nothing of the request was kept.' },
  JOB_OWNER_UNREACHABLE: { rpc: 3005, kind: 'request', retryable: true, meaning: 'The job is held by another host of the shared store (for jobs/logs: ran there), which is not running or did not take the request; nothing of it was kept, unless details.in_doubt says the host went away while carrying it out.' },
  REQUEST_TIMEOUT: { rpc: 3006, kind: 'request', retryable: true, meaning: 'A request line did not end within line_timeout_sec of its first byte; the connection is closed.' },
  SANDBOX_UNAVAILABLE: { rpc: 3007, kind: 'request', retryable: false, meaning: 'The config requires a sandbox per job (`sandbox: "required"`) and it cannot run here; the message gives the probe\'s reason.' },
  ENGINE_SPAWN_FAILED: { rpc: 4001, kind: 'job', retryable: true, meaning: 'The engine executable could not be started.' },
  ENGINE_EXIT_NONZERO: { rpc: 4002, kind: 'job', retryable: true, meaning: 'The engine exited with a non-zero code or a signal.' },
  OUTPUT_INVALID: { rpc: 4003, kind: 'job', retryable: true, meaning: "The turn's output is missing or does not match the output schema." },
  TIMEOUT: { rpc: 4004, kind: 'job', retryable: true, meaning: 'A turn ran longer than hard_timeout_sec and was stopped.' },
  INTERACTION_WAIT_TIMEOUT: { rpc: 4005, kind: 'job', retryable: false, meaning: 'A strict sticky job got no reply before wait_deadline_at.' },
  INTERACTION_PROCESS_LOST: { rpc: 4006, kind: 'job', retryable: false, meaning: 'The live engine process of a waiting sticky job went away.' },
  SESSION_RESUME_FAILED: { rpc: 4007, kind: 'job', retryable: false, meaning: "The engine's session could not be saved or resumed." },
  INTERACTIVE_MAX_ATTEMPT_EXCEEDED: { rpc: 4008, kind: 'job', retryable: false, meaning: 'max_attempt turns ran without a result.' },
  CANCELED_BY_USER: { rpc: 4009, kind: 'job', retryable: false, meaning: 'jobs/cancel stopped the job.' },
  DAEMON_RESTART_INTERRUPTED: { rpc: 4010, kind: 'job', retryable: true, meaning: 'The daemon stopped while the turn was running, and its engine could not be taken up, or was stopped with it (docs/restarts.md).' },
  ENGINE_TURN_INTERRUPTED: { rpc: 4012, kind: 'job', retryable: true, meaning: 'The engine exited without finishing its turn (no turn-end signal), e.g. killed by another process.' },
  ENGINE_TURN_FAILED: { rpc: 4013, kind: 'job', retryable: true, meaning: 'A live engine process ended its turn as failed (a model error, a refused request) and lives on.' },
  HOST_LOST: { rpc: 4014, kind: 'job', retryable: true, meaning: "The host holding the job's workspace and engine session stopped and did not come back within pinned_grace_sec." },
  JOB_LIMIT_EXCEEDED: { rpc: 4015, kind: 'job', retryable: false, meaning: 'The engine ran into a limit of the job (`limits`: processes or memory) and failed; `details` says which and its value.' },
  WORKSPACE_TOO_LARGE: { rpc: 4016, kind: 'job', retryable: false, meaning: "The job's workspace grew past `limits.workspace`; the job was stopped. `details` has the limit and the size measured." },
  PROVIDER_AUTH_FAILED: { rpc: 4017, kind: 'job', retryable: false, meaning: "The model provider refused the engine's key (401 or 403 through the gateway, or the engine said so); the message quotes the provider, never the key." },
  PROVIDER_RATE_LIMITED: { rpc: 4018, kind: 'job', retryable: true, meaning: 'The model provider kept answering 429, 503 or 529 past `engines.<name>.gateway.retry_max_sec` (or the engine said it was rate limited).' },
  JOB_INTERNAL_ERROR: { rpc: 4011, kind: 'job', retryable: true, meaning: 'The daemon hit an unexpected error running the job; it is logged.' },
  INTERACTIVE_COMPLETED_WITHOUT_DONE_MARKER: { rpc: 5001, kind: 'warning', retryable: false, meaning: 'An interactive job finished on valid output without the done marker.' },
  ASK_USER_MALFORMED: { rpc: 5002, kind: 'warning', retryable: false, meaning: 'An <ASK_USER_YAML> hint could not be read; the daemon built the pending itself.' },
  OUTPUT_REPAIRED: { rpc: 5003, kind: 'warning', retryable: false, meaning: 'The output needed deterministic repair to parse as JSON.' },
  INTERACTION_PROCESS_RESCUED: { rpc: 5004, kind: 'warning', retryable: false, meaning: 'The live process of a waiting sticky job was lost; by sticky_recovery "resume" its later turns resume the stored session.' },
  ARTIFACT_LINK_OUTSIDE: { rpc: 5005, kind: 'warning', retryable: false, meaning: 'An entry of the artifacts folder (or the folder itself) is a symbolic link that leads outside it; jobs/result leaves it out and names it in left_out.' },
  SKILL_MANIFEST_INVALID: { rpc: 6001, kind: 'skill', retryable: false, meaning: 'assets/runner.json is missing, unreadable or breaks the manifest rules.' },
  SKILL_SCHEMA_INVALID: { rpc: 6002, kind: 'skill', retryable: false, meaning: 'A schema file is missing, not JSON, or not a valid JSON Schema.' },
  SKILL_FILE_MISSING: { rpc: 6003, kind: 'skill', retryable: false, meaning: 'SKILL.md is missing.' },
  SKILL_LINK_OUTSIDE: { rpc: 6004, kind: 'skill', retryable: false, meaning: "A file or folder of the skill is a symbolic link that leads outside the skill's folder; nothing outside it is read." },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;
export type JobErrorCode = { [K in ErrorCode]: (typeof ERROR_CODES)[K]['kind'] extends 'job' ? K : never }[ErrorCode];
export type WarningCode = { [K in ErrorCode]: (typeof ERROR_CODES)[K]['kind'] extends 'warning' ? K : never }[ErrorCode];

/** The project's own error: the only error type that crosses module boundaries. */
export class SkilldError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: { details?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SkilldError';
    this.code = code;
    this.details = options.details;
  }

  /** The JSON-RPC error object for the wire. */
  toRpcError(): { code: number; message: string; data: { code: ErrorCode; details?: unknown } } {
    const data = this.details === undefined ? { code: this.code } : { code: this.code, details: this.details };
    return { code: ERROR_CODES[this.code].rpc, message: this.message, data };
  }
}

/** Builds the JSON-RPC error object for a code outside of a thrown error (framing layer). */
export function rpcError(code: ErrorCode, message: string): { code: number; message: string; data: { code: ErrorCode } } {
  return { code: ERROR_CODES[code].rpc, message, data: { code } };
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
