import t from 'tap';
import { codex } from '../../daemon/engines/codex.js';
import { gemini } from '../../daemon/engines/gemini.js';
import { iflow } from '../../daemon/engines/iflow.js';
import { ARGV_PROMPT_MAX_BYTES, routePrompt } from '../../daemon/engines/prompt-route.js';

/** Linux's limit on one argv element, its terminating NUL included (MAX_ARG_STRLEN). */
const MAX_ARG_STRLEN = 128 * 1024;
const fits = 'a'.repeat(ARGV_PROMPT_MAX_BYTES);
const over = 'a'.repeat(ARGV_PROMPT_MAX_BYTES + 1);

t.test('the argv limit leaves room under MAX_ARG_STRLEN for --prompt= and the NUL', async (t) => {
  t.ok(Buffer.byteLength(`--prompt=${fits}`) + 1 <= MAX_ARG_STRLEN);
});

t.test('an engine that reads its prompt on stdin gets it there, however small: no prompt on a command line', async (t) => {
  for (const engine of [codex, gemini]) {
    for (const prompt of [fits, '--help me', '- yes', 'x']) t.same(routePrompt(engine, prompt, true), { via: 'stdin' }, `${engine.name} ${prompt.slice(0, 12)}`);
    t.same(routePrompt(engine, fits, false), { via: 'argv' }, `${engine.name}: an argument while it fits, with stdin taken (sticky)`);
  }
  for (const prompt of [fits, '--help me', '- yes', 'x']) t.same(routePrompt(iflow, prompt, true), { via: 'argv' }, `iflow, never given stdin: ${prompt.slice(0, 12)}`);
});

t.test('the argv limit counts UTF-8 bytes, not characters', async (t) => {
  const wide = '✓'.repeat(Math.floor(ARGV_PROMPT_MAX_BYTES / 3) + 1);
  t.ok(wide.length < ARGV_PROMPT_MAX_BYTES);
  t.same(routePrompt(codex, wide, true), { via: 'stdin' });
});

t.test('codex and gemini read a prompt over the argv limit from stdin', async (t) => {
  t.same(routePrompt(codex, over, true), { via: 'stdin' });
  t.same(routePrompt(gemini, over, true), { via: 'stdin' });
  t.same(routePrompt(gemini, 'a'.repeat(8 * 1024 * 1024), true), { via: 'stdin' }, 'gemini: up to 8 MiB');
});

t.test('codex: the prompt `-` goes on stdin, since `-` as an argument means "read stdin"', async (t) => {
  t.same(routePrompt(codex, '-', true), { via: 'stdin' });
  t.same(routePrompt(gemini, '-', false), { via: 'argv' }, 'to gemini it is a prompt like any other');
  t.match(routePrompt(codex, '-', false), { via: 'refused', reason: /sticky process's stdin carries the replies/ });
});

t.test('iflow refuses a prompt over the argv limit, naming the limit', async (t) => {
  t.match(routePrompt(iflow, over, true), { via: 'refused', reason: `iflow takes at most ${ARGV_PROMPT_MAX_BYTES} bytes of prompt as an argument; this one has ${over.length}, and iflow is not given prompts on stdin` });
});

t.test('a sticky process cannot take a prompt over the argv limit: its stdin carries the replies', async (t) => {
  for (const engine of [codex, gemini]) t.match(routePrompt(engine, over, false), { via: 'refused', reason: new RegExp(`at most ${ARGV_PROMPT_MAX_BYTES} bytes .* sticky`) });
});

t.test('gemini refuses a prompt over the 8 MiB it reads from stdin', async (t) => {
  const huge = 'a'.repeat(8 * 1024 * 1024 + 1);
  t.match(routePrompt(gemini, huge, true), { via: 'refused', reason: `gemini reads at most ${8 * 1024 * 1024} bytes of prompt on stdin; this one has ${huge.length}` });
});

t.test('codex refuses a prompt over 1048576 characters, counted as code points', async (t) => {
  t.same(routePrompt(codex, 'a'.repeat(1_048_576), true), { via: 'stdin' });
  t.match(routePrompt(codex, 'a'.repeat(1_048_577), true), { via: 'refused', reason: 'codex takes at most 1048576 characters of prompt; this one has 1048577' });
  t.same(routePrompt(codex, '😀'.repeat(1_048_576), true), { via: 'stdin' }, 'an emoji is one character (two UTF-16 units)');
  t.match(routePrompt(codex, `${'😀'.repeat(1_048_576)}x`, true), { via: 'refused', reason: /this one has 1048577$/ });
  t.match(routePrompt(codex, `${'\ud800'.repeat(1_048_577)}`, true), { via: 'refused', reason: /this one has 1048577$/ }, 'a lone surrogate counts as one');
});

t.test('gemini and iflow refuse an empty prompt; codex takes one as an argument', async (t) => {
  t.match(routePrompt(gemini, '', true), { via: 'refused', reason: 'gemini does not run on an empty prompt' });
  t.match(routePrompt(iflow, '', true), { via: 'refused', reason: 'iflow does not run on an empty prompt' });
  t.same(routePrompt(codex, '', true), { via: 'argv' });
});

t.test('a blank prompt over the argv limit is refused: codex ignores a blank stdin', async (t) => {
  t.match(routePrompt(codex, ' '.repeat(ARGV_PROMPT_MAX_BYTES + 1), true), { via: 'refused', reason: /blank prompt on stdin/ });
  t.same(routePrompt(codex, ' '.repeat(ARGV_PROMPT_MAX_BYTES), true), { via: 'argv' });
});
