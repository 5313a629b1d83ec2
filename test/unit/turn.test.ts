import t from 'tap';
import { systemClock } from '../../daemon/base/clock.js';
import { claude } from '../../daemon/engines/claude.js';
import { codex } from '../../daemon/engines/codex.js';
import type { EngineAdapter } from '../../daemon/engines/engine.js';
import { StderrNotes } from '../../daemon/engines/error-lines.js';
import { STDERR_TAIL_LINES, checkResumed, classify, keepTail, startTurn, type TurnReport } from '../../daemon/jobs/turn.js';
import type { ExitInfo, OutputStream, Spawner } from '../../daemon/process/spawn.js';
import { CLAUDE_401, CODEX_EXEC_401, CODEX_STDERR } from '../fixtures/provider-refusals.js';

const spawnFailed = { code: null, signal: null, spawnError: 'E2BIG' };
const bigPrompt = 'p'.repeat(200_000);

t.test('a start that fails names the executable and the OS error code, never the rest of the argv', async (t) => {
  const outcome = classify(spawnFailed, null, { argv: ['/usr/bin/codex', 'exec', '--', bigPrompt], hardTimeoutMs: 1000, resuming: false }, { sawOutput: false, stderrTail: [] });
  t.same(outcome, { kind: 'failed', code: 'ENGINE_SPAWN_FAILED', message: 'cannot start /usr/bin/codex: E2BIG' });
});

t.test('a resumed turn that cannot start fails with SESSION_RESUME_FAILED, which says no retry helps', async (t) => {
  const outcome = classify(spawnFailed, null, { argv: ['/usr/bin/codex', 'exec', 'resume', '--', 'T', bigPrompt], hardTimeoutMs: 1000, resuming: true }, { sawOutput: false, stderrTail: [] });
  t.same(outcome, { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: 'cannot start /usr/bin/codex: E2BIG; the session was not resumed' });
});

t.test('an engine that cannot be started in its sandbox is a start failure too, said as bubblewrap says it', async (t) => {
  const spec = { argv: ['/home/al/.local/bin/codex', 'exec', '--', bigPrompt], hardTimeoutMs: 1000, resuming: false };
  const said = { sawOutput: false, stderrTail: ['bwrap: execvp /home/al/.local/bin/codex: No such file or directory'] };
  t.same(classify({ code: 1, signal: null, spawnError: null }, null, spec, said), { kind: 'failed', code: 'ENGINE_SPAWN_FAILED', message: "cannot start /home/al/.local/bin/codex: No such file or directory in the job's sandbox" });
  t.match(classify({ code: 1, signal: null, spawnError: null }, null, { ...spec, resuming: true }, said), { code: 'SESSION_RESUME_FAILED' });
  t.match(classify({ code: 1, signal: null, spawnError: null }, null, spec, { ...said, sawOutput: true }), { code: 'ENGINE_EXIT_NONZERO' }, 'an engine that ran and printed is not taken for one that never started');
  t.match(classify({ code: 2, signal: null, spawnError: null }, null, spec, said), { code: 'ENGINE_EXIT_NONZERO' });
});

t.test('the stderr tail keeps the last non-blank lines, oldest first', async (t) => {
  const tail: string[] = [];
  for (const line of ['one', '', '  ', 'two', 'three', 'four', 'five', 'six', 'seven']) keepTail(tail, line);
  t.equal(STDERR_TAIL_LINES, 5);
  t.same(tail, ['three', 'four', 'five', 'six', 'seven']);
  const outcome = classify({ code: 1, signal: null, spawnError: null }, null, { argv: ['x'], hardTimeoutMs: 1000, resuming: false }, { sawOutput: true, stderrTail: tail });
  t.same(outcome, { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: three | … | seven' }, 'with the tail alone, its first and last lines');
});

/** A Rust panic with RUST_BACKTRACE=1, as Codex (a Rust binary) prints one before exiting 101. */
const RUST_PANIC = [
  "thread 'main' panicked at codex-rs/core/src/codex.rs:812:37:",
  'called `Option::unwrap()` on a `None` value',
  'stack backtrace:',
  '   0: rust_begin_unwind',
  '             at /rustc/0000000/library/std/src/panicking.rs:665:5',
  '   1: core::panicking::panic_fmt',
  '   5: <unknown>',
  '   6: <unknown>',
  'note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.',
];

t.test("an engine that exited is quoted by its stderr's first meaningful line (and its last), not by a backtrace's tail", async (t) => {
  const tail: string[] = [];
  const stderr = new StderrNotes();
  for (const line of RUST_PANIC) {
    keepTail(tail, line);
    stderr.line(line);
  }
  const spec = { argv: ['codex'], hardTimeoutMs: 1000, resuming: false };
  const outcome = classify({ code: 101, signal: null, spawnError: null }, null, spec, { sawOutput: true, stderrTail: tail, stderr });
  t.same(outcome, { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: "engine exited with code 101: thread 'main' panicked at codex-rs/core/src/codex.rs:812:37: | called `Option::unwrap()` on a `None` value" });
  const reported = classify({ code: 1, signal: null, spawnError: null }, null, spec, { sawOutput: true, stderrTail: tail, stderr, engineError: 'stream disconnected before completion\nretrying' });
  t.same(reported, { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: stream disconnected before completion' }, 'the error the engine reported in its output comes first');
  const resumed = classify({ code: 1, signal: null, spawnError: null }, null, { ...spec, resuming: true }, { sawOutput: false, stderrTail: tail, stderr });
  t.match(resumed, { code: 'SESSION_RESUME_FAILED', message: "resume exited with code 1: thread 'main' panicked at" });
});

/** A spawner whose one process prints `lines` and exits as `exit`. */
function scripted(lines: ReadonlyArray<[OutputStream, string]>, exit: ExitInfo): Spawner {
  return {
    spawn: (request) => {
      const exited = (async () => {
        await Promise.resolve();
        for (const [stream, text] of lines) request.onLine(stream, text, false);
        return exit;
      })();
      return { pid: 4242, exited, stop: () => exited, write: () => false, redirectLogs: () => undefined, detach: async () => undefined };
    },
    adopt: () => Promise.reject(new Error('not in this test')),
    stopSurvivors: () => Promise.reject(new Error('not in this test')),
  };
}

/** A one-shot turn of `adapter` whose process prints `stdout` then `stderr` and exits with `code`. */
function turnOf(adapter: EngineAdapter, stdout: readonly string[], stderr: readonly string[], code: number, resume: { expected: string } | null = null): Promise<TurnReport> {
  const lines: Array<[OutputStream, string]> = [...stdout.map((text): [OutputStream, string] => ['stdout', text]), ...stderr.map((text): [OutputStream, string] => ['stderr', text])];
  const spec = {
    argv: ['engine'], cwd: '/', env: {}, mark: 'job-1', sandbox: null, limits: null, keeperDir: '/nonexistent', logs: { stdout: '/dev/null', stderr: '/dev/null' },
    onOutput: () => undefined, parser: adapter.newParser(), hardTimeoutMs: 60_000, resuming: resume !== null, expectedSession: resume?.expected ?? null, stdin: null,
  };
  return startTurn(scripted(lines, { code, signal: null, spawnError: null }), systemClock, spec).done;
}

t.test("a turn's end: the provider's refusal the engine reported is the job's code, before the resume check", async (t) => {
  t.match((await turnOf(codex, CODEX_EXEC_401, CODEX_STDERR, 1)).outcome, { kind: 'failed', code: 'PROVIDER_AUTH_FAILED', message: /^the model provider refused the engine's key \(HTTP 401\): unexpected status 401 Unauthorized: Incorrect API key provided: \[redacted\], url: / });
  const resumed = await turnOf(claude, CLAUDE_401, [], 1, { expected: '5e48bd94-a290-404f-b7bc-5fcef78720b5' });
  t.same(resumed.outcome, { kind: 'failed', code: 'PROVIDER_AUTH_FAILED', message: "the model provider refused the engine's key (HTTP 401): Invalid API key · Fix external API key" }, 'a resume the key failed: its session is not lost');
  const lost = await turnOf(claude, ['{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: 11111111-2222-3333-4444-555555555555"]}'], [], 1, { expected: '11111111-2222-3333-4444-555555555555' });
  t.same(lost.outcome, { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: 'resume failed before any session was reported: engine exited with code 1: No conversation found with session ID: 11111111-2222-3333-4444-555555555555' });
  const panicked = await turnOf(codex, ['{"type":"thread.started","thread_id":"T-1"}'], RUST_PANIC, 101);
  t.same(panicked.outcome, { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: "engine exited with code 101: thread 'main' panicked at codex-rs/core/src/codex.rs:812:37: | called `Option::unwrap()` on a `None` value" });
  const recovered = ['{"type":"thread.started","thread_id":"T-1"}', '{"type":"error","message":"unexpected status 429 Too Many Requests"}', '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"Done."}}', '{"type":"turn.completed"}'];
  t.same((await turnOf(codex, recovered, [], 0)).outcome, { kind: 'ok' }, 'a 429 the engine got past leaves a turn that ended well alone');
});

t.test('a failed resume whose output named no session is SESSION_RESUME_FAILED; with a session, or a first turn, it stays ENGINE_EXIT_NONZERO', async (t) => {
  const exited = { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: No conversation found' } as const;
  t.same(checkResumed(exited, null, true), { kind: 'failed', code: 'SESSION_RESUME_FAILED', message: 'resume failed before any session was reported: engine exited with code 1: No conversation found' });
  t.same(checkResumed(exited, 'S-1', true), exited);
  t.same(checkResumed(exited, null, false), exited);
  t.same(checkResumed({ kind: 'ok' }, null, true), { kind: 'ok' });
  const timeout = { kind: 'failed', code: 'TIMEOUT', message: 'x' } as const;
  t.same(checkResumed(timeout, null, true), timeout);
});
