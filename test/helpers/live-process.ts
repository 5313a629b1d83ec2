import type { Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LiveSessionClosed, type ApprovalDecision, type ApprovalRequest, type LiveEvent, type LiveProtocol, type LiveSession, type LiveStart, type LiveTurnResult } from '../../daemon/engines/live-session.js';
import { waitForFile, waitUntilGone } from './daemon.js';

/** A live session on a process of its own, wired as the daemon wires one: stdout lines in, messages out on stdin. */
export interface LiveProcess {
  session: LiveSession;
  child: ChildProcess;
  /** Everything the process printed on stdout, line by line. */
  stdout: string[];
  /** Resolves with the exit code once the process is gone and its output read (the session is disposed then). */
  exited: Promise<number | null>;
  /** Closes stdin and waits for the exit. */
  end(): Promise<number | null>;
  /** SIGKILL to the process and everything it started (its process group), then waits for the exit. */
  kill(): Promise<number | null>;
}

export function startLive(command: readonly string[], protocol: LiveProtocol, start: LiveStart, env: Record<string, string> = {}): LiveProcess {
  const [file, ...args] = [...command, ...protocol.argv(start)] as [string, ...string[]];
  const child = spawn(file, args, { cwd: start.cwd, env: { ...process.env, ...protocol.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const session = protocol.connect({ send: (line) => child.stdin?.write(`${line}\n`) }, start);
  const stdout: string[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    stdout.push(line);
    session.receive(line);
  });
  child.stderr?.resume();
  child.stdin?.on('error', () => undefined);
  const exited = once(child, 'close').then(([code]) => {
    session.dispose(new LiveSessionClosed(`the process exited with ${String(code)}`));
    return code as number | null;
  });
  return {
    session,
    child,
    stdout,
    exited,
    end: () => {
      child.stdin?.end();
      return exited;
    },
    kill: () => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // the group is gone already
      }
      return exited;
    },
  };
}

/** `startLive` in a fresh folder; the process tree is killed and the folder removed at the test's end. */
export async function startLiveIn(t: { teardown(fn: () => unknown): void }, command: readonly string[], protocol: LiveProtocol, start: Omit<LiveStart, 'cwd'>): Promise<LiveProcess & { cwd: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'skilld-live-'));
  const proc = startLive(command, protocol, { ...start, cwd });
  t.teardown(async () => {
    await proc.kill();
    await rm(cwd, { recursive: true, force: true });
  });
  return { ...proc, cwd };
}

/** One call a fake engine recorded (test/fixtures/README.md). */
export interface FakeCall {
  argv: string[];
  pid: number;
  prompt: string;
  resume: boolean;
  session: string;
}

/** The calls the fake engine recorded in `cwd`, in order. */
export function fakeCalls(cwd: string): FakeCall[] {
  return readFileSync(join(cwd, '.fake-engine', 'calls.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as FakeCall);
}

/** What each fake's model call uses, and what a turn of one call reports. */
const ONE_CALL = { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, requests: 1 };

/**
 * The conversation every live protocol holds in one process, against a fake: `open`, a turn that
 * asks, then a reply that starts with dashes and arrives verbatim in the same session. Resolves
 * with the session id `open` gave.
 */
export async function twoTurns(t: Test, p: LiveProcess & { cwd: string }): Promise<string | null> {
  const sessionId = await p.session.open();
  const events: LiveEvent[] = [];
  const first = await p.session.prompt('Go.\n- scenario: "ask_plain"\n', (event) => events.push(event));
  t.same(first, { outcome: 'completed', messages: ['Which city should I use?'], error: null, usage: ONE_CALL });
  t.same(events, [{ type: 'message', text: 'Which city should I use?' }]);
  const second = await p.session.prompt('--help me, Paris', () => undefined);
  t.equal(second.outcome, 'completed');
  t.same(second.usage, ONE_CALL, 'each turn reports its own usage, not the session\'s');
  t.match(second.messages.at(-1), /"reply": "--help me, Paris"/);
  const calls = fakeCalls(p.cwd);
  t.same(calls.map((c) => [c.prompt.startsWith('Go.') ? 'first' : c.prompt, c.resume, c.session]), [
    ['first', false, sessionId],
    ['--help me, Paris', true, sessionId],
  ]);
  t.equal(new Set(calls.map((c) => c.pid)).size, 1, 'one process served both');
  return sessionId;
}

/**
 * What every live protocol does with an interrupt, against a fake: a turn hanging in its tool ends
 * `interrupted`, the tool is stopped, and the same process serves the next turn.
 */
export async function interruptHanging(t: Test, p: LiveProcess & { cwd: string }): Promise<void> {
  await p.session.open();
  const running = p.session.prompt('- scenario: "hang"\n', () => undefined);
  // The turn is under way once the fake's tool is up.
  const tool = Number(await waitForFile(join(p.cwd, '.fake-engine', 'child-pid')));
  p.session.interrupt();
  const { usage, ...ended } = await running;
  t.same(ended, { outcome: 'interrupted', messages: [], error: null });
  t.equal((usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0), 0, 'no model call answered: none or nothing used');
  await waitUntilGone(tool); // the engine stops the tool the interrupted turn was running
  t.equal((await p.session.prompt('and now?', () => undefined)).outcome, 'completed');
}

/** In auto mode the agent is never asked: the fake's `approve` tool just runs, and its reply says so. */
export async function autoToolRuns(t: Test, p: LiveProcess & { cwd: string }): Promise<void> {
  await p.session.open();
  const events: LiveEvent[] = [];
  const result = await p.session.prompt('- scenario: "approve"\n', (event) => events.push(event));
  t.notOk(events.some((event) => event.type === 'approval'));
  t.ok(existsSync(join(p.cwd, 'approved.txt')));
  t.match(result.messages.at(-1), /"approved": true/);
}

/** `dispose` rejects the turn in flight at once, and every later call. */
export async function disposeInFlight(t: Test, p: LiveProcess & { cwd: string }): Promise<void> {
  await p.session.open();
  const running = p.session.prompt('- scenario: "hang"\n', () => undefined);
  await waitForFile(join(p.cwd, '.fake-engine', 'child-pid'));
  p.session.dispose(new Error('stopped'));
  await t.rejects(running, { message: 'stopped' });
  await t.rejects(p.session.prompt('again', () => undefined), { message: 'stopped' });
  await t.rejects(p.session.open(), { message: 'stopped' });
}

/** The engine process exiting mid-turn rejects the turn with its exit code. */
export async function diesMidTurn(t: Test, p: LiveProcess): Promise<void> {
  await p.session.open();
  const running = p.session.prompt('- scenario: "exit1"\n', () => undefined);
  t.equal(await p.exited, 1);
  await t.rejects(running, /exited with 1/);
}

/**
 * One turn of the fake's `approve` scenario in a session started with approvals `ask`: the command
 * is one approval event (matching `request`), answered `decision`; it runs only if allowed, and
 * the reply says so. Resolves with the turn's result.
 */
export async function approvalRound(t: Test, p: LiveProcess & { cwd: string }, decision: ApprovalDecision, request: Partial<ApprovalRequest>): Promise<LiveTurnResult> {
  await p.session.open();
  const asked: ApprovalRequest[] = [];
  const result = await p.session.prompt('- scenario: "approve"\n', (event) => {
    if (event.type !== 'approval') return;
    asked.push(event.request);
    p.session.answer(event.request.id, decision);
  });
  t.equal(asked.length, 1, decision);
  t.match(asked[0], request);
  t.equal(existsSync(join(p.cwd, 'approved.txt')), decision === 'allow', `${decision}: the command ran only if allowed`);
  t.match(result.messages.at(-1), decision === 'allow' ? /"approved": true/ : /"approved": false/);
  t.match(result.usage, { input_tokens: 20, output_tokens: 10 }, 'two model calls: the one that asked for the tool, and the answer to its result');
  return result;
}
