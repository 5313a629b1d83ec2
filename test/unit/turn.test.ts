import t from 'tap';
import { STDERR_TAIL_LINES, checkResumed, classify, keepTail } from '../../daemon/jobs/turn.js';

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
  t.same(outcome, { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1: three | four | five | six | seven' });
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
