// How the page talks to `skillctl web`: calls (POST /rpc) and event streams (GET /events).
import { useEffect, useRef, useState } from 'preact/hooks';

/** An error answer: the daemon's stable code and message, or the page server's own. */
export class CallError extends Error {
  readonly code: string;
  readonly details: unknown;

  constructor(error: { code: string; message: string; details?: unknown }) {
    super(error.message);
    this.code = error.code;
    this.details = error.details;
  }
}

/** One daemon method through the page's server; throws CallError with the daemon's code. */
export async function call<T>(method: string, params?: Record<string, unknown>): Promise<T> {
  let answer: { result?: T; error?: { code: string; message: string; details?: unknown } };
  try {
    const response = await fetch('/rpc', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ method, params }) });
    answer = (await response.json()) as typeof answer;
  } catch {
    throw new CallError({ code: 'PAGE_UNREACHABLE', message: 'the page’s server (skillctl web) does not answer' });
  }
  if (answer.error !== undefined) throw new CallError(answer.error);
  return answer.result as T;
}

/** Whether the daemon (and the page's server) can be reached, as the event streams last said. */
export type Reach = 'connected' | 'daemon_away' | 'page_away';

const reachListeners = new Set<(reach: Reach) => void>();
let reach: Reach = 'connected';

function setReach(next: Reach): void {
  if (next === reach) return;
  reach = next;
  for (const listener of reachListeners) listener(reach);
}

/** The reach as it changes. */
export function useReach(): Reach {
  const [now, setNow] = useState(reach);
  useEffect(() => {
    reachListeners.add(setNow);
    return () => void reachListeners.delete(setNow);
  }, []);
  return now;
}

/** What an event stream tells: job events, skill changes, the daemon back (after it was away), a refusal. */
export interface StreamHandlers {
  job?(event: JobEvent): void;
  skills?(ids: string[]): void;
  /** The daemon answers again after it was away: what was shown may be old. */
  back?(): void;
  failure?(error: CallError): void;
}

/** Follows `/events` (a job's: with `jobId`, from its first event) while the component is shown. */
export function useEvents(jobId: string | null, handlers: StreamHandlers): void {
  // The stream stays while the handlers change with each render: it calls the latest ones.
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => {
    const on = (): StreamHandlers => latest.current;
    const source = new EventSource(jobId === null ? '/events' : `/events?job_id=${encodeURIComponent(jobId)}&after_seq=0`);
    let away = false;
    source.addEventListener('job', (message) => on().job?.(JSON.parse((message as MessageEvent<string>).data) as JobEvent));
    source.addEventListener('skills', (message) => on().skills?.((JSON.parse((message as MessageEvent<string>).data) as { ids: string[] }).ids));
    source.addEventListener('daemon', (message) => {
      const { connected } = JSON.parse((message as MessageEvent<string>).data) as { connected: boolean };
      setReach(connected ? 'connected' : 'daemon_away');
      if (connected && away) on().back?.();
      away = !connected;
    });
    source.addEventListener('failure', (message) => {
      on().failure?.(new CallError(JSON.parse((message as MessageEvent<string>).data) as { code: string; message: string }));
      source.close();
    });
    source.addEventListener('open', () => {
      if (reach === 'page_away') setReach('connected');
    });
    source.addEventListener('error', () => {
      // The browser tries again by itself; a refusal (a new token after skillctl web restarted) ends the stream.
      away = true;
      setReach('page_away');
    });
    return () => source.close();
  }, [jobId]);
}

/** One `job/event`. */
export interface JobEvent {
  job_id: string;
  seq: number;
  ts: string;
  type: string;
  data: Record<string, unknown> | null;
}

/** A coded error of a job or skill. */
export interface CodedError {
  code: string;
  message: string;
  path?: string;
}

/** A job as jobs/get and jobs/list give it (the fields the page reads). */
export interface Job {
  job_id: string;
  skill_id: string;
  engine: string;
  execution_mode: string;
  status: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  attempt: number;
  host?: string | null;
  error: CodedError | null;
  pending_interaction_id: number | null;
  wait_deadline_at: string | null;
  approvals?: string;
}

export interface PendingOption {
  label: string;
  value: unknown;
}

/** A question (jobs/pending's `pending`). */
export interface Pending {
  interaction_id: number;
  prompt: string;
  kind: string;
  options?: PendingOption[];
  ui_hints?: { approval?: { kind: string; summary: string } } & Record<string, unknown>;
  context?: { request?: unknown } & Record<string, unknown>;
}

/** One round of jobs/history. */
export interface Interaction {
  interaction_id: number;
  prompt: string;
  kind: string;
  response: unknown;
  resolution_mode: string | null;
  asked_at: string;
  replied_at: string | null;
}

/** A skill as skills/list gives it. */
export interface Skill {
  id: string;
  name?: string;
  description?: string;
  version: string | null;
  status: string;
  execution_modes: string[];
  effective_engines: string[];
  warnings?: string[];
  error?: CodedError;
}

export const TERMINAL = ['succeeded', 'failed', 'canceled'];
