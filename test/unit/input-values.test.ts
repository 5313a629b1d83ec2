// run's values read where they point (clients/input-values.ts): k=@file, k=@-, --input-json -
// and @file, k=@@text as text; standard input read once in a command line.
import t from 'tap';
import { UsageError } from '../../clients/args.js';
import { readRunValues, readValues, type ValueSources } from '../../clients/input-values.js';

function sources(files: Record<string, string>, stdin = ''): ValueSources & { stdinReads: number } {
  const out = {
    stdinReads: 0,
    readFile: async (path: string) => {
      if (path in files) return files[path] as string;
      throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    },
    readStdin: async () => {
      out.stdinReads += 1;
      return stdin;
    },
  };
  return out;
}

t.test('k=v as before: JSON when it parses, else text', async (t) => {
  t.same(await readValues(undefined, ['n=3', 'flag=true', 'text=hello world', 'o={"a":1}'], 'input', sources({})), { n: 3, flag: true, text: 'hello world', o: { a: 1 } });
  t.equal(await readValues(undefined, [], 'input', sources({})), undefined, 'nothing given: nothing sent');
});

t.test('k=@path is the file’s text as it is; k=@@x is the text @x', async (t) => {
  const read = await readValues(undefined, ['text=@notes.txt', 'n=@num.txt', 'handle=@@alice'], 'input', sources({ 'notes.txt': 'line 1\nline 2\n', 'num.txt': '42' }));
  t.same(read, { text: 'line 1\nline 2\n', n: '42', handle: '@alice' }, 'a file is text, never parsed as JSON');
});

t.test('k=@- and --input-json - read standard input; it is read once in a command line', async (t) => {
  const src = sources({}, 'from stdin');
  t.same(await readValues(undefined, ['text=@-'], 'input', src), { text: 'from stdin' });
  t.same(await readValues('-', [], 'input', sources({}, '{"text":"json on stdin","n":2}')), { text: 'json on stdin', n: 2 });
  t.same(await readValues('@in.json', ['n=3'], 'input', sources({ 'in.json': '{"text":"from a file","n":1}' })), { text: 'from a file', n: 3 }, 'fields go on top');
  const twice = sources({}, '{}');
  await t.rejects(readRunValues({ input: ['-', []], param: [undefined, ['p=@-']] }, twice), new UsageError('--param p=@- and --input-json - both read standard input; it can be read once'));
  t.equal(twice.stdinReads, 1);
});

t.test('a file that cannot be read, an empty name, bad JSON: a usage error naming it', async (t) => {
  await t.rejects(readValues(undefined, ['text=@missing.txt'], 'input', sources({})), new UsageError('--input text=@missing.txt: cannot read missing.txt: ENOENT (to send the text @missing.txt, write --input text=@@missing.txt)'));
  await t.rejects(readValues(undefined, ['text=@'], 'input', sources({})), new UsageError('--input text=@ names no file after @ (to send the text @, write --input text=@@)'));
  await t.rejects(readValues('@missing.json', [], 'input', sources({})), new UsageError('--input-json @missing.json: cannot read missing.json: ENOENT'), 'JSON text never starts with @: no hint');
  await t.rejects(readValues('-', [], 'param', sources({}, '[1]')), new UsageError('--param-json must be a JSON object'));
  await t.rejects(readValues(undefined, ['novalue'], 'input', sources({})), new UsageError('--input needs key=value, got "novalue"'));
});
