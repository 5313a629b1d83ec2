// How a failed turn's message quotes the engine (daemon/engines/error-lines.ts): its first
// meaningful line, never a backtrace's frames or a notice, never a secret, never a whole megabyte.
import t from 'tap';
import { MeaningfulLines, QUOTE_MAX_CHARS, StderrNotes, quoteLine, quoteText, redactSecrets } from '../../daemon/engines/error-lines.js';
import { CODEX_STDERR, GEMINI_401_STDERR, GEMINI_429_STDERR } from '../fixtures/provider-refusals.js';

function notesOf(lines: readonly string[]): StderrNotes {
  const notes = new StderrNotes();
  for (const line of lines) notes.line(line);
  return notes;
}

/** A Rust panic with RUST_BACKTRACE=1, as Codex (a Rust binary) prints one before exiting 101. */
const RUST_PANIC = [
  "thread 'main' panicked at codex-rs/core/src/codex.rs:812:37:",
  'called `Option::unwrap()` on a `None` value',
  'stack backtrace:',
  '   0: rust_begin_unwind',
  '             at /rustc/0000000/library/std/src/panicking.rs:665:5',
  '   1: core::panicking::panic_fmt',
  '   2: core::panicking::panic',
  '   3: core::option::unwrap_failed',
  '   4: codex::main',
  '   5: <unknown>',
  '   6: <unknown>',
  'note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.',
];

t.test('a Rust panic is quoted by its panic line and its message, not by its frames', async (t) => {
  t.equal(notesOf(RUST_PANIC).summary(), "thread 'main' panicked at codex-rs/core/src/codex.rs:812:37: | called `Option::unwrap()` on a `None` value");
  const short = ["thread 'main' panicked at codex-rs/core/src/codex.rs:812:37:", 'explicit panic', 'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace'];
  t.equal(notesOf(short).summary(), "thread 'main' panicked at codex-rs/core/src/codex.rs:812:37: | explicit panic");
  t.equal(notesOf(RUST_PANIC).first, "thread 'main' panicked at codex-rs/core/src/codex.rs:812:37:");
});

t.test("Node's uncaught exception is quoted by its error, not by its place, its source line or its version footer", async (t) => {
  const crash = ['file:///usr/lib/node_modules/x/cli.js:10', "    throw new Error('boom');", '    ^', '', 'Error: boom', '    at main (file:///usr/lib/node_modules/x/cli.js:10:11)', '    at node:internal/main/run_main_module:28:49', '', 'Node.js v20.20.2'];
  t.equal(notesOf(crash).summary(), 'Error: boom');
  t.equal(quoteText(crash.join('\n')), 'Error: boom', 'a multi-line text the same way');
  // A system call that failed in one of Node's own modules: the error names its code and path.
  const failedCall = ['node:fs:1372', '  const result = binding.mkdir(', '                         ^', '', "Error: EACCES: permission denied, mkdir '/w/.fake-engine/sessions'", '    at Object.mkdirSync (node:fs:1372:26)', '', 'Node.js v20.20.2'];
  t.equal(notesOf(failedCall).summary(), "Error: EACCES: permission denied, mkdir '/w/.fake-engine/sessions'");
});

t.test("the engines' start-up notices are no reason: Gemini's real stderr is quoted by its error", async (t) => {
  t.equal(notesOf(GEMINI_429_STDERR).first, 'Attempt 1 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached');
  t.match(notesOf(GEMINI_401_STDERR).first, /^Error when talking to Gemini API Full report available at: \/tmp\/gemini-client-error-Turn\.run-sendMessageStream-[\dTZ-]+\.json _ApiError: \{"error":\{"code":401,"message":"API key not valid/);
  t.equal(notesOf(CODEX_STDERR).first, null, "Codex's helper-binary warning and its stdin notice");
  t.match(notesOf(CODEX_STDERR).summary(), /^WARNING: proceeding/, 'with nothing meaningful, the first non-blank line stands in');
  const filter = new MeaningfulLines();
  for (const notice of ['Warning: 256-color support not detected.', '[STARTUP] Phase x', 'YOLO mode is enabled. All tool calls will be automatically approved.', '(node:12) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.', '  }', '---']) {
    t.notOk(filter.meaningful(notice), notice);
  }
  for (const said of ['fatal: engine crashed', 'Error: connect ECONNREFUSED 127.0.0.1:443', 'Note that the key was rotated', '401: Unauthorized']) t.ok(filter.meaningful(said), said);
});

t.test('first | … | last: the first meaningful line, and the last where it is another', async (t) => {
  t.equal(notesOf(['', 'only']).summary(), 'only');
  t.equal(notesOf(['one', '   1: frame', 'two']).summary(), 'one | two');
  t.equal(notesOf(['one', 'two', 'three', '', 'four']).summary(), 'one | … | four');
  t.equal(notesOf([]).summary(), null);
  t.equal(notesOf(['', '  ']).summary(), null);
});

t.test('memory stays bounded: a huge stderr keeps its first line, its last ones, and a count', async (t) => {
  const notes = new StderrNotes();
  notes.line(`first ${'x'.repeat(3 * 1024 * 1024)}`);
  for (let i = 0; i < 20_000; i += 1) notes.line(`line ${i}`);
  const summary = notes.summary() ?? '';
  t.match(summary, /^first x+… \| … \| line 19999$/);
  t.ok(summary.length < 2 * QUOTE_MAX_CHARS);
});

t.test('a quoted line is trimmed and cut at 300 characters with an ellipsis, never inside a UTF-16 pair', async (t) => {
  t.equal(quoteLine('  said  '), 'said');
  const long = quoteLine('x'.repeat(5000));
  t.equal(long.length, QUOTE_MAX_CHARS);
  t.ok(long.endsWith('…'));
  const emoji = quoteLine(`${'a'.repeat(QUOTE_MAX_CHARS - 2)}😀😀`);
  t.notMatch(emoji, /[\uD800-\uDBFF]…$/, 'no lone high surrogate before the ellipsis');
  t.equal(quoteText(null), null);
  t.equal(quoteText('\n  \n'), null);
  t.equal(quoteText('\nstack backtrace:\n   0: x\n'), 'stack backtrace:', 'nothing meaningful: the first non-blank line');
});

t.test('secrets are redacted: API keys, tokens, long hex and base64, whatever surrounds them', async (t) => {
  const cases: Array<[string, string]> = [
    ['Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD, url: x', 'Incorrect API key provided: [redacted], url: x'],
    ['key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789-abcdefAA rejected', 'key [redacted] rejected'],
    ['GET https://generativelanguage.googleapis.com/v1beta/models?key=AIzaSyA1234567890abcdefghijklmnopqrstu', 'GET https://generativelanguage.googleapis.com/v1beta/models?key=[redacted]'],
    ['x-api-key: dummy-key-value', 'x-api-key: [redacted]'],
    ['"api_key": "hunter22hunter22"', '"api_key": "[redacted]"'],
    ['Authorization: Bearer abc123.def456-ghi', 'Authorization: Bearer [redacted]'],
    ['token 0123456789abcdef0123456789abcdef0123 leaked', 'token [redacted] leaked'],
    ['secret QmFzZTY0U2VjcmV0VG9rZW5XaXRoRGlnaXRzMTIz end', 'secret [redacted] end'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc', 'jwt [redacted]'],
    ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', '[redacted]'],
  ];
  for (const [text, redacted] of cases) t.equal(redactSecrets(text), redacted, text);
  const kept = [
    'No conversation found with session ID: 11111111-2222-3333-4444-555555555555',
    'Full report available at: /tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-28T03-30-08-674Z.json',
    'Missing bearer or basic authentication in header',
    'request id: req_011CSHoEeqs5C3JFuN7KjQ8M',
    'AbstractFactoryBeanDefinitionRegistryPostProcessor failed',
  ];
  for (const text of kept) t.equal(redactSecrets(text), text, text);
  t.equal(quoteLine(`${'a '.repeat(140)}sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD`), `${'a '.repeat(140)}[redacted]`, 'a key that straddles the cut is redacted before the cut');
});
