// The Codex app-server live session against the fake Codex in app-server mode (which prints what
// the real one prints; see fake-transcripts.test.ts). The real CLI: test/e2e/real-engines.test.ts.
import t from 'tap';
import { join } from 'node:path';
import { codexAppServer } from '../../daemon/engines/codex/app-server.js';
import type { LiveStart } from '../../daemon/engines/live-session.js';
import { FIXTURES } from '../helpers/daemon.js';
import { approvalRound, diesMidTurn, disposeInFlight, interruptHanging, startLiveIn, twoTurns, type LiveProcess } from '../helpers/live-process.js';

const FAKE = [join(FIXTURES, 'fake-codex.mjs')];

function live(t: { teardown(fn: () => unknown): void }, approvals: LiveStart['approvals'] = 'auto'): Promise<LiveProcess & { cwd: string }> {
  return startLiveIn(t, FAKE, codexAppServer, { engine: 'codex', model: null, approvals, newSessionId: 'unused' });
}

t.test('two turns in one process: open gives the thread id, each turn ends at turn/completed, a reply starting with dashes arrives verbatim', async (t) => {
  const p = await live(t);
  t.match(await twoTurns(t, p), /^[0-9a-f-]{36}$/, 'the thread id');
  t.equal(await p.end(), 0, 'stdin closed while idle: it exits 0');
});

t.test('interrupt: turn/interrupt ends the turn as interrupted, and the process serves the next one', async (t) => {
  await interruptHanging(t, await live(t));
});

t.test('approvals: a command the agent wants to run is an approval event; allow runs it, deny does not', async (t) => {
  for (const decision of ['allow', 'deny'] as const) {
    await approvalRound(t, await live(t, 'ask'), decision, { kind: 'command', summary: "run: /bin/bash -lc 'touch approved.txt'" });
  }
});

t.test('dispose rejects the turn in flight at once, and every later call', async (t) => disposeInFlight(t, await live(t)));

t.test('the process dying mid-turn rejects the turn', async (t) => diesMidTurn(t, await live(t)));
