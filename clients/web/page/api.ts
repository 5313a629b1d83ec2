// How the page talks to `skillctl web`: calls (POST /rpc) and event streams (GET /events).
import { useEffect, useRef, useState } from 'preact/hooks';
// The wire's shapes, as skillctl reads them: types only, erased from what the browser loads.
import type { CodedError, InteractionView, JobEvent as WireJobEvent, JobView, PendingQuestion, ResultView, SkillView } from '../../wire.js';

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

/** What an event stream tells: job events, skill changes, the stream standing, the daemon back (after it was away), a refusal. */
export interface StreamHandlers {
  job?(event: JobEvent): void;
  skills?(ids: string[]): void;
  /**
   * The stream stands: every change from now on comes through it. First once it is subscribed, then
   * each time it is again (the daemon, or the page's server, back). State read from here on misses
   * nothing; state read before may have missed a change made before the stream stood.
   */
  live?(): void;
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
      if (connected) on().live?.();
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

/** One `job/event`: its data, for the page, an object (or null). */
export interface JobEvent extends WireJobEvent {
  data: Record<string, unknown> | null;
}

/** A job as jobs/get and jobs/list give it, with the fields the page reads besides the common ones. */
export interface Job extends JobView {
  updated_at: string;
  finished_at: string | null;
  attempt: number;
  host?: string | null;
  pending_interaction_id: number | null;
  wait_deadline_at: string | null;
  /** What it was asked to do (jobs/get alone gives these). */
  input?: Record<string, unknown>;
  parameter?: Record<string, unknown>;
  share_with?: string[];
}

/** A question (jobs/pending's `pending`), with the hints an approval carries. */
export interface Pending extends PendingQuestion {
  ui_hints?: { approval?: { kind: string; summary: string } } & Record<string, unknown>;
  context?: { request?: unknown } & Record<string, unknown>;
}

/** A skill as skills/list gives it, with its name and description. */
export interface Skill extends SkillView {
  name?: string;
  description?: string;
}

export type { CodedError, InteractionView as Interaction, ResultView as Result };

/** The statuses after which a job does not change (clients/wire.ts has them too; the page cannot load that module). */
export const TERMINAL = ['succeeded', 'failed', 'canceled'];
