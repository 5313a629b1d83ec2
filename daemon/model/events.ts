/**
 * `output`: one line the engine printed, raw; `message`: one message of the agent, as text;
 * `network_refused`: a connection the job's own network refused; `provider_retry`: a model call
 * its provider limited, retried by the gateway (docs/network.md).
 */
export type JobEventType = 'status_changed' | 'input_required' | 'output' | 'message' | 'warning' | 'network_refused' | 'provider_retry' | 'finished';

/** One `job/event` notification body (docs/protocol.md, "job/event"). `seq` increases per job without gaps. */
export interface JobEventRecord {
  job_id: string;
  seq: number;
  ts: string;
  type: JobEventType;
  data: unknown;
}

export type EventListener = (event: JobEventRecord) => void;

/**
 * Where a reader of a job's stored events stands: after event `seq`. `at` helps the files store
 * find the next event's line (a byte offset at or before it); other stores ignore it.
 */
export interface EventCursor {
  seq: number;
  at: number;
}

/** One page of a job's stored events, and where the next page starts. */
export interface EventPage {
  events: JobEventRecord[];
  cursor: EventCursor;
  /** Nothing was stored after the page when it was read. */
  end: boolean;
}

/** Where a reader starts that wants the events after `seq`. */
export function cursorAfter(seq: number): EventCursor {
  return { seq, at: 0 };
}

/**
 * Jobs' events as the supervisor and the subscriptions see them, whichever store keeps them:
 * numbered per job without gaps, told to live listeners, replayable.
 */
export interface JobEvents {
  /**
   * Picks up the numbering of a job whose events were written by an earlier daemon. A store that
   * reads them all to do so shows each to `visit` on the way and resolves true; false: it read
   * none (`read` has them).
   */
  prime(jobId: string, visit?: (event: JobEventRecord) => void): Promise<boolean>;
  emit(jobId: string, type: JobEventType, data: unknown): void;
  listen(listener: EventListener): () => void;
  /**
   * Runs `handler` whenever listeners may have missed events that were stored (a shared store's
   * announcements went unheard for a while): whoever follows a job should read it again.
   */
  onMissed(handler: () => void): () => void;
  /**
   * A job's stored events after `cursor`, in order: about `maxBytes` of them (at least one when
   * there is one), so that no reader holds a whole log. Every event listeners have heard is there.
   */
  read(jobId: string, cursor: EventCursor, maxBytes: number): Promise<EventPage>;
  /** Forgets a finished job once its events are stored. */
  close(jobId: string): Promise<void>;
  closeAll(): Promise<void>;
}
