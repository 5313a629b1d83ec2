// The page server's shared stream (clients/web/feed.ts): one source for every listener, started by
// the first and stopped after the last; a late listener hears whether the daemon answers.
import t from 'tap';
import { Feed, type FeedSource, type SendEvent } from '../../clients/web/feed.js';

/** A source the test drives: how often it was started, and what it sends while it runs. */
function driven(): { source: FeedSource; starts: number; send: SendEvent; running: boolean; end: (error?: Error) => void } {
  const state = {
    starts: 0,
    running: false,
    send: (() => undefined) as SendEvent,
    end: (_error?: Error): void => undefined,
    source: (async (send, signal) => {
      state.starts += 1;
      state.running = true;
      state.send = send;
      try {
        await new Promise<void>((resolve, reject) => {
          signal.addEventListener('abort', () => resolve(), { once: true });
          state.end = (error) => (error === undefined ? resolve() : reject(error));
        });
      } finally {
        state.running = false;
      }
    }) as FeedSource,
  };
  return state;
}

/** A listener: what it heard, and a way to leave. */
function listener(): { heard: [string, unknown][]; send: SendEvent; leave: AbortController } {
  const heard: [string, unknown][] = [];
  return { heard, send: (name, data) => void heard.push([name, data]), leave: new AbortController() };
}

t.test('listeners share one run of the source; the last to leave stops it; the next starts another', async (t) => {
  const feed = driven();
  const shared = new Feed(feed.source);
  const a = listener();
  const b = listener();
  const following = [shared.follow(a.send, a.leave.signal)];
  feed.send('daemon', { connected: true });
  following.push(shared.follow(b.send, b.leave.signal));
  feed.send('job', { seq: 1 });
  t.equal(feed.starts, 1, 'one source for both');
  t.same(a.heard, [['daemon', { connected: true }], ['job', { seq: 1 }]]);
  t.same(b.heard, [['daemon', { connected: true }], ['job', { seq: 1 }]], 'the late one first hears whether the daemon answers');
  a.leave.abort();
  await following[0];
  t.ok(feed.running, 'still running for the one left');
  b.leave.abort();
  await following[1];
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(feed.running, 'stopped after the last left');
  const c = listener();
  const third = shared.follow(c.send, c.leave.signal);
  t.equal(feed.starts, 2);
  t.same(c.heard, [], 'a new run has said nothing of the daemon yet');
  c.leave.abort();
  await third;
});

t.test('a source that ends by itself ends every listener; one that breaks rejects each', async (t) => {
  const feed = driven();
  const shared = new Feed(feed.source);
  const a = listener();
  const ended = shared.follow(a.send, a.leave.signal);
  feed.end();
  await ended;
  const b = listener();
  const c = listener();
  const broken = [shared.follow(b.send, b.leave.signal), shared.follow(c.send, c.leave.signal)];
  t.equal(feed.starts, 2, 'an ended source is started again for the next listener');
  feed.end(new Error('a bug'));
  for (const following of broken) await t.rejects(following, /a bug/);
  const aborted = new AbortController();
  aborted.abort();
  await shared.follow(listener().send, aborted.signal);
  t.equal(feed.starts, 2, 'a listener that left before it came starts nothing');
});
