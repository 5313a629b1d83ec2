/** A stable error as the daemon reports it on jobs and skills (docs/protocol.md, Errors); skillctl reads only these fields. */
export interface CodedError {
  code: string;
  message: string;
  path?: string;
}

/** A job ([Job](docs/protocol.md#job)). */
export interface JobView {
  job_id: string;
  skill_id: string;
  engine: string;
  execution_mode: string;
  status: string;
  created_at: string;
  error: CodedError | null;
  /** Absent from daemons before owners, and for jobs they created. */
  owner?: { uid: number; user: string };
  [key: string]: unknown;
}

/** The answer of `jobs/result`. */
export interface ResultView {
  job_id: string;
  status: string;
  output: unknown;
  artifacts: string[];
  warnings: string[];
  error: CodedError | null;
  /** Entries of the artifacts folder that lead outside it (warning `ARTIFACT_LINK_OUTSIDE`); absent when there are none. */
  left_out?: string[];
}

/** One `job/event` notification. */
export interface JobEvent {
  job_id: string;
  seq: number;
  ts: string;
  type: string;
  data: unknown;
}

/** A skill as `skills/list` reports it. */
export interface SkillView {
  id: string;
  version: string | null;
  status: string;
  execution_modes: string[];
  effective_engines: string[];
  /** The engine jobs/create chooses when none is named (absent from a daemon older than it). */
  default_engine?: string | null;
  /** Absent from a daemon older than the field. */
  warnings?: string[];
  error?: CodedError;
  [key: string]: unknown;
}

/** An engine as `engines/list` reports it. */
export interface EngineView {
  name: string;
  command: string[];
  available: boolean;
  version: string | null;
  /** Why no job of it can run here, or null; absent from daemons before it. */
  reason?: string | null;
  interactive_profile: { kind: string; reason: string } | null;
}

/** Whether a job of the engine can run: its command starts and the daemon does not refuse its jobs (a daemon before `reason` says only the first). */
export function canRun(engine: Pick<EngineView, 'available' | 'reason'>): boolean {
  return engine.available && (engine.reason ?? null) === null;
}

/** The answer of `daemon/status`. */
export interface StatusView {
  slots: { max: number; used: number; queued: number };
  jobs: Record<string, number>;
  skills: { ok: number; invalid: number };
  notices?: CodedError[];
  /** Absent from daemons before the state folder's lock. */
  state_lock?: StateLockStatus;
  /** Absent from daemons before retention. */
  retention?: RetentionView;
  sandbox?: SandboxStatus;
  /** Absent from daemons before a job's own network. */
  network?: NetworkStatus;
  /** Absent from daemons before limits. */
  limits?: Record<string, LimitStatus>;
  [key: string]: unknown;
}

/** `daemon/status.state_lock`: whether the daemon holds its state folder's lock, and why not. */
export interface StateLockStatus {
  path: string;
  held: boolean;
  reason: string | null;
}

/** `daemon/status.network`: what new jobs get, why not their own, and what every job may reach. */
export interface NetworkStatus {
  mode: string;
  configured: string | null;
  reason: string | null;
  allow: string[];
  skills_may_allow: boolean;
  /** Absent from daemons before the model gateway. */
  gateways?: { engine: string; upstream: string }[];
  /** What leads each job's loopback to the daemon (`socat`, `node`); null on the host's network; absent from older daemons. */
  bridge?: string | null;
}

/** `daemon/status.sandbox`: the mode, what new jobs get, why not, and who engines are. */
export interface SandboxStatus {
  mode: string;
  isolation: string;
  reason: string | null;
  /** Absent from daemons before engines ran as another user. */
  user?: { name: string; uid: number; gid: number; switched: boolean } | null;
}

/** One of `daemon/status.limits`: its value (a count or bytes; null: none), whether it holds, by what, or why not. */
export interface LimitStatus {
  value: number | null;
  enforced: boolean;
  by: string | null;
  reason: string | null;
}

/** `daemon/status.retention`: the policy and the last background round. */
export interface RetentionView {
  max_age_sec: number | null;
  max_jobs: number | null;
  interval_sec: number;
  last_round: { at: string; removed: number; error: string | null } | null;
}

/** One host as `daemon/hosts` reports it. */
export interface HostView {
  host_id: string;
  state: string;
  lease_until: string | null;
  version: string;
  max_concurrent: number;
  jobs: { queued: number; running: number; waiting_user: number };
}

/** One chunk of `jobs/logs`. */
export interface LogChunk {
  data: string;
  next_offset: number;
  eof: boolean;
}

/** One chunk of `jobs/artifact`. */
export interface ArtifactChunk {
  path: string;
  size: number;
  offset: number;
  data: string;
  next_offset: number;
  eof: boolean;
}

/** Job statuses after which nothing changes. */
export const TERMINAL_STATUSES: readonly string[] = ['succeeded', 'failed', 'canceled'];

/** One choice offered with a question. */
export interface PendingOption {
  label: string;
  value: unknown;
}

/** The question a waiting job asks ([Pending](docs/protocol.md#pending)). */
export interface PendingQuestion {
  interaction_id: number;
  prompt: string;
  kind: string;
  options?: PendingOption[];
  ui_hints?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The answer of `jobs/pending`. */
export interface PendingView {
  job_id: string;
  status: string;
  pending: PendingQuestion | null;
}

/** The answer of `jobs/reply`. */
export interface ReplyAnswer {
  job_id: string;
  status: string;
  accepted: boolean;
}

/** One ask/reply round of `jobs/history`. */
export interface InteractionView {
  interaction_id: number;
  prompt: string;
  kind: string;
  response: unknown;
  resolution_mode: string | null;
  asked_at: string;
  replied_at: string | null;
}

/** The answer of `jobs/history`. */
export interface HistoryView {
  job_id: string;
  interactions: InteractionView[];
  /** The `after` of the next page; absent from daemons before paging. */
  next?: number | null;
}
