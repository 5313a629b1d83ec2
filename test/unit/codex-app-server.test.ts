// The Codex app-server live session against the fake Codex in app-server mode (which prints what
// the real one prints; see fake-transcripts.test.ts). The real CLI: test/e2e/real-engines.test.ts.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codexAppServer } from '../../daemon/engines/codex/app-server.js';
import type { LiveSession, LiveStart, LiveTurnResult } from '../../daemon/engines/live-session.js';
import type { TranscriptEntry } from '../fixtures/codex-app-server-plans.js';
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

// ---------------------------------------------------------------------------------------------
// In memory, against what the real app-server said (transcripts/codex-app-server-*.ndjson)

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Plays a recorded transcript's answers into a session: each of our `turn/start`s is a prompt,
 * approvals are allowed, and `inject` adds lines of its own before a turn and as it starts.
 * Resolves with each turn's result.
 */
async function replay(plan: string, inject: (turn: number, when: 'before' | 'during') => string[] = () => []): Promise<LiveTurnResult[]> {
  const entries = readFileSync(join(FIXTURES, 'transcripts', `codex-app-server-${plan}.ndjson`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TranscriptEntry);
  const session = codexAppServer.connect({ send: () => undefined }, { engine: 'codex', model: null, cwd: '/', approvals: 'ask', newSessionId: 'unused' });
  const opened = session.open();
  const turns: Array<Promise<LiveTurnResult>> = [];
  const say = async (line: string): Promise<void> => {
    session.receive(line);
    await settle();
  };
  for (const entry of entries) {
    if (entry.dir === '>' && entry.msg['method'] === 'turn/start') {
      await opened;
      for (const line of inject(turns.length, 'before')) await say(line);
      turns.push(session.prompt('x', (event) => (event.type === 'approval' ? session.answer(event.request.id, 'allow') : undefined)));
      for (const line of inject(turns.length - 1, 'during')) await say(line);
    } else if (entry.dir === '<') await say(JSON.stringify(entry.msg));
  }
  return Promise.all(turns);
}

const ONE_CALL = { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, requests: 1 };
const THREAD = '00000000-0000-0000-0000-000000000002';

function report(threadId: string, input: unknown, output: unknown): string {
  const total = { totalTokens: 0, inputTokens: input, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: output, reasoningOutputTokens: 0 };
  return JSON.stringify({ method: 'thread/tokenUsage/updated', params: { threadId, turnId: 'T', tokenUsage: { total, last: total, modelContextWindow: 258400 } } });
}

t.test('usage: each turn gets what the thread total grew by during it, one request per report that grew it', async (t) => {
  t.same((await replay('turns')).map((r) => r.usage), [ONE_CALL, ONE_CALL], 'the second turn is 30 - 15, not the running 30');
  t.same((await replay('approve-accept')).map((r) => r.usage), [{ input_tokens: 20, output_tokens: 10, cached_input_tokens: 0, requests: 2 }], 'the call that asked for the command, and the answer after it');
  t.same((await replay('interrupt')).map((r) => r.usage), [null, ONE_CALL], 'interrupted before any call answered: nothing reported');
  t.same((await replay('model-error')).map((r) => r.usage), [null, null], 'no call answered, no report');
});

t.test('usage: a report sent again unchanged counts nothing; a subagent thread counts toward the turn; growth between turns toward none', async (t) => {
  const results = await replay('turns', (turn, when) => {
    if (when === 'during' && turn === 0) return [report(THREAD, 10, 5), report('00000000-0000-0000-0000-0000000000aa', 7, 1)];
    return when === 'before' && turn === 1 ? [report(THREAD, 17, 8)] : [];
  });
  t.same(results.map((r) => r.usage), [
    { input_tokens: 17, output_tokens: 6, cached_input_tokens: 0, requests: 2 },
    { input_tokens: 3, output_tokens: 2, cached_input_tokens: 0, requests: 1 },
  ]);
});

t.test('usage: a malformed report counts 0 rather than throwing, and never lowers the total', async (t) => {
  const results = await replay('turns', (turn, when) =>
    when === 'during' && turn === 0 ? ['{"method":"thread/tokenUsage/updated","params":{"tokenUsage":"none"}}', report(THREAD, 'odd', 1), report(THREAD, -3, null)] : [],
  );
  t.same(results.map((r) => r.usage), [{ input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, requests: 2 }, ONE_CALL]);
});
