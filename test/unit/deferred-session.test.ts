// A live protocol whose code loads at its first session (the ACP SDK): what the engine prints
// meanwhile reaches the session in order, nothing is sent before it exists, a session disposed
// while loading is disposed once made, and a load that fails fails the opening.
import t from 'tap';
import { LazyMaker, type SessionMaker } from '../../daemon/engines/deferred-session.js';
import type { LiveSession, LiveStart } from '../../daemon/engines/live-session.js';

const START: LiveStart = { engine: 'gemini', model: null, cwd: '/w', approvals: 'auto', newSessionId: 'x' };

interface Recorded {
  lines: string[];
  calls: string[];
}

function recordingMaker(made: Recorded[]): SessionMaker {
  return (io) => {
    const seen: Recorded = { lines: [], calls: [] };
    made.push(seen);
    const session: LiveSession = {
      receive: (line) => void seen.lines.push(line),
      open: async () => {
        seen.calls.push('open');
        io.send('{"method":"initialize"}');
        return 'session-1';
      },
      prompt: async (text) => {
        seen.calls.push(`prompt ${text}`);
        return { outcome: 'completed', messages: [text], error: null, usage: null };
      },
      interrupt: () => void seen.calls.push('interrupt'),
      answer: (id, decision) => void seen.calls.push(`answer ${id} ${decision}`),
      dispose: (error) => void seen.calls.push(`dispose ${error.message}`),
    };
    return session;
  };
}

/** A maker whose load resolves when `release` is called. */
function gated(made: Recorded[]): { lazy: LazyMaker; release(): void; loads: () => number } {
  let release = (): void => undefined;
  let loads = 0;
  const lazy = new LazyMaker(() => {
    loads += 1;
    return new Promise((resolve) => (release = () => resolve(recordingMaker(made))));
  });
  return { lazy, release: () => release(), loads: () => loads };
}

t.test('lines printed while the code loads reach the session in order; calls after open go straight to it', async (t) => {
  const made: Recorded[] = [];
  const sent: string[] = [];
  const { lazy, release, loads } = gated(made);
  const session = lazy.connect({ send: (line) => sent.push(line) }, START);
  session.receive('{"a":1}');
  session.interrupt();
  session.answer('1', 'allow');
  session.receive('{"b":2}');
  t.equal(made.length, 0, 'no session before the code is there');
  const opened = session.open();
  t.same(sent, [], 'nothing is sent before the session exists');
  release();
  t.equal(await opened, 'session-1');
  t.same(made[0]?.lines, ['{"a":1}', '{"b":2}'], 'the early lines, in order');
  t.same(sent, ['{"method":"initialize"}']);
  session.receive('{"c":3}');
  t.same(made[0]?.lines.at(-1), '{"c":3}');
  t.match(await session.prompt('hi', () => undefined), { outcome: 'completed', messages: ['hi'] });
  session.interrupt();
  session.answer('2', 'deny');
  session.dispose(new Error('gone'));
  t.same(made[0]?.calls, ['open', 'prompt hi', 'interrupt', 'answer 2 deny', 'dispose gone'], 'what came before the session was nothing to act on');

  const next = lazy.connect({ send: () => undefined }, START);
  t.equal(made.length, 2, 'once loaded, a session is made at once');
  next.dispose(new Error('done'));
  t.equal(loads(), 1, 'the code is loaded once');
});

t.test('a session disposed while its code loads is disposed once made, and its opening rejects', async (t) => {
  const made: Recorded[] = [];
  const { lazy, release } = gated(made);
  const session = lazy.connect({ send: () => undefined }, START);
  await t.rejects(session.prompt('early', () => undefined), /before the session was opened/);
  session.dispose(new Error('process gone'));
  const opened = session.open();
  release();
  await t.rejects(opened, /process gone/);
  t.same(made[0]?.calls, ['dispose process gone']);
  await t.rejects(session.prompt('late', () => undefined), /process gone/, 'later calls reject as the session does');
});

t.test('a load that fails fails the opening; load() of a protocol reports it', async (t) => {
  const lazy = new LazyMaker(() => Promise.reject(new Error('cannot load the SDK')));
  const session = lazy.connect({ send: () => undefined }, START);
  await t.rejects(session.open(), /cannot load the SDK/);
  await t.rejects(lazy.get(), /cannot load the SDK/);
});
