import type { JobEvents } from '../model/events.js';

/**
 * The job events with each status change also told to `moved` as it is emitted. Listeners of
 * the events hear too much for this: on a shared store they also hear other hosts' events of the
 * jobs someone follows here, and each host would then notify. Emitted is where the move was made,
 * so exactly one host tells each move (docs/notify.md, "Several hosts").
 */
export function tellingMoves(events: JobEvents, moved: (jobId: string, to: string) => void): JobEvents {
  return {
    prime: (jobId, visit) => events.prime(jobId, visit),
    emit: (jobId, type, data) => {
      events.emit(jobId, type, data);
      const to = type === 'status_changed' ? (data as { to?: unknown } | null)?.to : undefined;
      if (typeof to === 'string') moved(jobId, to);
    },
    listen: (listener) => events.listen(listener),
    onMissed: (handler) => events.onMissed(handler),
    read: (jobId, cursor, maxBytes) => events.read(jobId, cursor, maxBytes),
    close: (jobId) => events.close(jobId),
    closeAll: () => events.closeAll(),
  };
}
