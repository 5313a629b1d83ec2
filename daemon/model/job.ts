import type { JobErrorCode, WarningCode } from '../../rpc/errors.js';
import type { JobStatus } from './states.js';
import type { Usage } from './usage.js';

export const ENGINE_NAMES = ['codex', 'gemini', 'iflow', 'claude'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export const EXECUTION_MODES = ['auto', 'interactive'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** How a live engine treats tool use: `auto` runs tools unasked (as one-shot turns do); `ask` turns each permission request into an `approval` event. */
export type ApprovalMode = 'auto' | 'ask';

export type ProfileKind = 'resumable' | 'sticky_process';

export interface InteractiveProfile {
  kind: ProfileKind;
  reason: string;
}

export interface SessionHandle {
  engine: EngineName;
  handle_type: 'session_id';
  handle_value: string;
}

/** How a job's engine processes are isolated (docs/sandbox.md): in a sandbox of their own, or as the daemon's user with nothing more. */
export type Isolation = 'sandbox' | 'none';

export interface JobError {
  code: JobErrorCode;
  message: string;
  /** For a limit the job ran into (`JOB_LIMIT_EXCEEDED`, `WORKSPACE_TOO_LARGE`): which, its value, and what the job reached where that is known. */
  details?: { limit: string; value: number; used?: number };
}

/** The most UTF-8 bytes a job's `error.message` has; a longer one is cut, ending in `…`. */
export const MAX_ERROR_MESSAGE_BYTES = 4096;
const ELLIPSIS = '…';

/** The error with its message cut to `MAX_ERROR_MESSAGE_BYTES`, never inside a character. */
export function boundError(error: JobError): JobError {
  const bytes = Buffer.from(error.message, 'utf8');
  if (bytes.length <= MAX_ERROR_MESSAGE_BYTES) return error;
  let end = MAX_ERROR_MESSAGE_BYTES - Buffer.byteLength(ELLIPSIS);
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end -= 1;
  return { code: error.code, message: `${bytes.subarray(0, end).toString('utf8')}${ELLIPSIS}` };
}

/** Who started a job: the user of the connection that created it (docs/access.md), by uid and by name (hosts of a cluster may number users differently). */
export interface JobOwner {
  uid: number;
  user: string;
}

/** A job exactly as it is stored and sent on the wire (docs/protocol.md, "Job"). */
export interface Job {
  job_id: string;
  skill_id: string;
  skill_version: string;
  engine: EngineName;
  execution_mode: ExecutionMode;
  status: JobStatus;
  interactive_require_user_reply: boolean;
  session_timeout_sec: number;
  hard_timeout_sec: number;
  model: string | null;
  /** `ask`: the engine's permission requests become questions (kind `approval`). Absent in records written before approvals existed: `auto`. */
  approvals?: ApprovalMode;
  interactive_profile: InteractiveProfile | null;
  /**
   * Decided by the host that starts the job's first turn, for the whole job; null until then.
   * Absent in records written before sandboxes existed: those jobs go on without one.
   */
  isolation?: Isolation | null;
  attempt: number;
  max_attempt: number | null;
  pending_interaction_id: number | null;
  wait_deadline_at: string | null;
  session_handle: SessionHandle | null;
  warnings: WarningCode[];
  error: JobError | null;
  /** Who created it; absent in records written before owners existed (such a job is an administrator's alone in `owner` access). */
  owner?: JobOwner;
  /** Who else may see and act on it besides its owner and administrators: `user:<name>`, `group:<name>` (docs/access.md). */
  share_with?: string[];
  /**
   * A test job's scripted model (`skillctl skills test`, docs/skills.md): the address on this
   * host's loopback its engine calls instead of its provider, with a home of the job's own that
   * names it. Absent for every other job.
   */
  scripted_model?: string;
  /** What its model calls used so far, counted at each turn's end (model/usage.ts). Absent until a turn reports any, and in older records. */
  usage?: Usage;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}
