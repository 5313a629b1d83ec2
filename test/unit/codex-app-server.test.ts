// The Codex app-server live session against the fake Codex in app-server mode (which prints what
// the real one prints; see fake-transcripts.test.ts). The real CLI: test/e2e/real-engines.test.ts.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexAppServer } from '../../daemon/engines/codex/app-server.js';
import type { ApprovalRequest, LiveEvent, LiveStart } from '../../daemon/engines/live-session.js';
import { FIXTURES, waitForFile } from '../helpers/daemon.js';
import { startLive, type LiveProcess } from '../helpers/live-process.js';

const FAKE = [join(FIXTURES, 'fake-codex.mjs')];

async function live(t: { teardown(fn: () => unknown): void }, approvals: LiveStart['approvals'] = 'auto'): Promise<LiveProcess & { cwd: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'skilld-live-'));
  const proc = startLive(FAKE, codexAppServer, { engine: 'codex', model: null, cwd, approvals, newSessionId: 'unused' });
  t.teardown(async () => {
    await proc.kill();
    await rm(cwd, { recursive: true, force: true });
  });
  return { ...proc, cwd };
}

function calls(cwd: string): Array<{ prompt: string; resume: boolean; session: string }> {
  return readFileSync(join(cwd, '.fake-engine', 'calls.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { prompt: string; resume: boolean; session: string });
}

t.test('two turns in one process: open gives the thread id, each turn ends at turn/completed, a reply starting with dashes arrives verbatim', async (t) => {
  const p = await live(t);
  const threadId = await p.session.open();
  t.match(threadId, /^[0-9a-f-]{36}$/);
  const events: LiveEvent[] = [];
  const first = await p.session.prompt('Go.\n- scenario: "ask_plain"\n', (e) => events.push(e));
  t.same(first, { outcome: 'completed', messages: ['Which city should I use?'], error: null });
  t.same(events, [{ type: 'message', text: 'Which city should I use?' }]);
  const second = await p.session.prompt('--help me, Paris', () => undefined);
  t.equal(second.outcome, 'completed');
  t.match(second.messages.at(-1), /"reply": "--help me, Paris"/);
  t.same(calls(p.cwd).map((c) => [c.prompt.startsWith('Go.') ? 'first' : c.prompt, c.resume, c.session]), [
    ['first', false, threadId],
    ['--help me, Paris', true, threadId],
  ]);
  t.equal(new Set(calls(p.cwd).map((c) => (c as unknown as { pid: number }).pid)).size, 1, 'one process served both');
  t.equal(await p.end(), 0, 'stdin closed while idle: it exits 0');
});

t.test('interrupt: turn/interrupt ends the turn as interrupted, and the process serves the next one', async (t) => {
  const p = await live(t);
  await p.session.open();
  const running = p.session.prompt('- scenario: "hang"\n', () => undefined);
  // The turn is under way once the fake's tool is up.
  await waitForFile(join(p.cwd, '.fake-engine', 'child-pid'));
  p.session.interrupt();
  t.same(await running, { outcome: 'interrupted', messages: [], error: null });
  t.equal((await p.session.prompt('and now?', () => undefined)).outcome, 'completed');
});

t.test('approvals: a command the agent wants to run is an approval event; allow runs it, deny does not', async (t) => {
  for (const decision of ['allow', 'deny'] as const) {
    const p = await live(t, 'ask');
    await p.session.open();
    const asked: ApprovalRequest[] = [];
    const result = await p.session.prompt('- scenario: "approve"\n', (event) => {
      if (event.type !== 'approval') return;
      asked.push(event.request);
      p.session.answer(event.request.id, decision);
    });
    t.equal(asked.length, 1, decision);
    t.match(asked[0], { kind: 'command', summary: "run: /bin/bash -lc 'touch approved.txt'" });
    t.equal(existsSync(join(p.cwd, 'approved.txt')), decision === 'allow', `${decision}: the command ran only if allowed`);
    t.match(result.messages.at(-1), decision === 'allow' ? /"approved": true/ : /"approved": false/);
  }
});

t.test('dispose rejects the turn in flight at once, and every later call', async (t) => {
  const p = await live(t);
  await p.session.open();
  const running = p.session.prompt('- scenario: "hang"\n', () => undefined);
  p.session.dispose(new Error('stopped'));
  await t.rejects(running, { message: 'stopped' });
  await t.rejects(p.session.prompt('again', () => undefined), { message: 'stopped' });
});

t.test('the process dying mid-turn rejects the turn', async (t) => {
  const p = await live(t);
  await p.session.open();
  const running = p.session.prompt('- scenario: "exit1"\n', () => undefined);
  t.equal(await p.exited, 1);
  await t.rejects(running, /exited with 1/);
});
