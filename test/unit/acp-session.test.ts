// The ACP live session (Gemini `--acp`, iFlow `--experimental-acp`) against the fakes' ACP mode,
// which prints what the real `gemini --acp` prints (see fake-acp-transcripts.test.ts).
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { geminiAcp, iflowAcp } from '../../daemon/engines/acp/protocols.js';
import type { LiveProtocol, LiveStart } from '../../daemon/engines/live-session.js';
import { FIXTURES, waitForFile } from '../helpers/daemon.js';
import { approvalRound, autoToolRuns, diesMidTurn, disposeInFlight, fakeCalls, interruptHanging, startLiveIn, twoTurns, type LiveProcess } from '../helpers/live-process.js';

const ENGINES = [
  { engine: 'gemini', protocol: geminiAcp, command: [join(FIXTURES, 'fake-gemini.mjs')], sessionId: /^[0-9a-f-]{36}$/ },
  { engine: 'iflow', protocol: iflowAcp, command: [join(FIXTURES, 'fake-iflow.mjs')], sessionId: /^session-[0-9a-f]{32}$/ },
] as const;

type Engine = (typeof ENGINES)[number];

function live(t: { teardown(fn: () => unknown): void }, e: Engine, approvals: LiveStart['approvals'] = 'auto'): Promise<LiveProcess & { cwd: string }> {
  return startLiveIn(t, e.command, e.protocol as LiveProtocol, { engine: e.engine, model: null, approvals, newSessionId: 'unused' });
}

const calls = fakeCalls;

t.test('argv: gemini takes --model= and --yolo in auto mode, iflow mirrors its one-shot flags', async (t) => {
  const start: LiveStart = { engine: 'gemini', model: 'gemini-2.5-pro', cwd: '/w', approvals: 'auto', newSessionId: 'x' };
  t.same(geminiAcp.argv(start), ['--acp', '--skip-trust', '--model=gemini-2.5-pro', '--yolo']);
  t.same(geminiAcp.argv({ ...start, model: null, approvals: 'ask' }), ['--acp', '--skip-trust']);
  t.same(geminiAcp.env, { GEMINI_CLI_NO_RELAUNCH: 'true' });
  t.same(iflowAcp.argv({ ...start, engine: 'iflow' }), ['--experimental-acp', '--yolo', '--thinking']);
  t.same(iflowAcp.argv({ ...start, engine: 'iflow', approvals: 'ask' }), ['--experimental-acp', '--thinking']);
});

for (const e of ENGINES) {
  t.test(`${e.engine}: two turns in one process, a reply starting with dashes arrives verbatim`, async (t) => {
    const p = await live(t, e);
    t.match(await twoTurns(t, p), e.sessionId);
    t.ok(calls(p.cwd)[0]?.argv.includes('--yolo'), 'auto mode: started so that it never asks');
    t.equal(await p.end(), 0, 'stdin closed while idle: it exits 0');
  });

  t.test(`${e.engine}: interrupt sends session/cancel, the turn ends interrupted, and the process serves the next one`, async (t) => {
    await interruptHanging(t, await live(t, e));
  });

  t.test(`${e.engine}: approvals in ask mode: the shell command is an approval event; allow runs it, deny does not`, async (t) => {
    for (const decision of ['allow', 'deny'] as const) {
      const result = await approvalRound(t, await live(t, e, 'ask'), decision, { kind: 'command', summary: 'touch approved.txt' });
      t.equal(result.outcome, 'completed');
    }
  });

  t.test(`${e.engine}: interrupt while an approval waits answers it cancelled and ends the turn interrupted`, async (t) => {
    const p = await live(t, e, 'ask');
    await p.session.open();
    const result = await p.session.prompt('- scenario: "approve"\n', (event) => {
      if (event.type === 'approval') p.session.interrupt();
    });
    t.same(result, { outcome: 'interrupted', messages: [], error: null, usage: null });
    t.notOk(existsSync(join(p.cwd, 'approved.txt')));
  });

  t.test(`${e.engine}: in auto mode the agent is never asked; a tool just runs`, async (t) => autoToolRuns(t, await live(t, e)));


  t.test(`${e.engine}: dispose rejects the turn in flight at once, and every later call`, async (t) => disposeInFlight(t, await live(t, e)));


  t.test(`${e.engine}: the process dying mid-turn rejects the turn`, async (t) => diesMidTurn(t, await live(t, e)));


  t.test(`${e.engine}: SIGKILL while a turn hangs rejects the turn`, async (t) => {
    const p = await live(t, e);
    await p.session.open();
    const running = p.session.prompt('- scenario: "hang"\n', () => undefined);
    await waitForFile(join(p.cwd, '.fake-engine', 'child-pid'));
    t.equal(await p.kill(), null);
    await t.rejects(running, /exited with null/);
  });
}
