// Where moves are heard (daemon/notify/heard-moves.ts): each status change emitted here is told
// once, after the event went to the store; what listeners hear from elsewhere (another host's
// events on a shared store) is not, so that one host alone tells each move.
import t from 'tap';
import type { EventListener, JobEvents, JobEventType } from '../../daemon/model/events.js';
import { tellingMoves } from '../../daemon/notify/heard-moves.js';

/** Events that keep what was emitted, and let the test play a listener's event from elsewhere. */
function recordingEvents(): { events: JobEvents; emitted: Array<[string, JobEventType, unknown]>; fromElsewhere(jobId: string, to: string): void } {
  const emitted: Array<[string, JobEventType, unknown]> = [];
  const listeners = new Set<EventListener>();
  const events: JobEvents = {
    prime: async () => false,
    emit: (jobId, type, data) => void emitted.push([jobId, type, data]),
    listen: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onMissed: () => () => undefined,
    read: async (_jobId, cursor) => ({ events: [], cursor, end: true }),
    close: async () => undefined,
    closeAll: async () => undefined,
  };
  const fromElsewhere = (jobId: string, to: string): void => {
    for (const listener of listeners) listener({ job_id: jobId, seq: 9, ts: '2026-01-01T00:00:00.000Z', type: 'status_changed', data: { from: 'running', to } });
  };
  return { events, emitted, fromElsewhere };
}

t.test('a status change emitted is stored first, then told; other events and other hosts\' moves are not told', async (t) => {
  const { events, emitted, fromElsewhere } = recordingEvents();
  const moves: Array<[string, string, number]> = [];
  const telling = tellingMoves(events, (jobId, to) => moves.push([jobId, to, emitted.length]));
  const heard: string[] = [];
  telling.listen((event) => heard.push(event.job_id));
  telling.emit('job-1', 'status_changed', { from: 'running', to: 'waiting_user' });
  telling.emit('job-1', 'input_required', { pending: { interaction_id: 1 } });
  telling.emit('job-2', 'status_changed', { from: null, to: 'queued' });
  fromElsewhere('job-3', 'failed');
  t.same(moves, [['job-1', 'waiting_user', 1], ['job-2', 'queued', 3]], 'each after its event was handed to the store');
  t.same(emitted.map(([jobId, type]) => [jobId, type]), [['job-1', 'status_changed'], ['job-1', 'input_required'], ['job-2', 'status_changed']]);
  t.same(heard, ['job-3'], 'listeners still hear everything');
});
