import t from 'tap';
import { LINE_EDGE_BYTES, LineSplitter, MAX_RPC_LINE_BYTES, encodeLine, limitText, type LineEdges } from '../../rpc/framing.js';

interface Recorder {
  lines: string[];
  overflows: number[];
  /** Every sink call in order, to check that an overflow and the following line keep their order. */
  calls: string[];
  splitter: LineSplitter;
}

function record(maxLineBytes: number): Recorder {
  const lines: string[] = [];
  const overflows: number[] = [];
  const calls: string[] = [];
  const splitter = new LineSplitter(maxLineBytes, {
    line: (text) => {
      lines.push(text);
      calls.push(`line:${text}`);
    },
    overflow: (bytes) => {
      overflows.push(bytes);
      calls.push(`overflow:${bytes}`);
    },
  });
  return { lines, overflows, calls, splitter };
}

t.test('the socket cap is 1 MiB', async (t) => {
  t.equal(MAX_RPC_LINE_BYTES, 1024 * 1024);
});

t.test('one chunk with several lines yields each line in order', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('one\ntwo\nthree\n'));
  t.same(r.lines, ['one', 'two', 'three']);
  t.same(r.overflows, []);
});

t.test('a line split across chunks is delivered once, whole', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('{"jsonrpc":'));
  t.same(r.lines, [], 'nothing before the newline');
  r.splitter.push(Buffer.from('"2.0","id"'));
  r.splitter.push(Buffer.from(':1}\n{"next"'));
  t.same(r.lines, ['{"jsonrpc":"2.0","id":1}']);
  r.splitter.push(Buffer.from(':2}\n'));
  t.same(r.lines, ['{"jsonrpc":"2.0","id":1}', '{"next":2}']);
});

t.test('a newline alone in a chunk ends the pending line', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('abc'));
  r.splitter.push(Buffer.from('\n'));
  t.same(r.lines, ['abc']);
});

t.test('\\r\\n terminators are removed, even when split between chunks', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('alpha\r\nbeta\r'));
  r.splitter.push(Buffer.from('\ngamma\r\n'));
  t.same(r.lines, ['alpha', 'beta', 'gamma']);
});

t.test('a \\r inside a line is kept; only a trailing one is removed', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('a\rb\r\n'));
  t.same(r.lines, ['a\rb']);
});

t.test('empty lines are delivered as empty strings', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('\n\nx\n'));
  t.same(r.lines, ['', '', 'x']);
});

t.test('a multi-byte UTF-8 character split across chunks decodes intact', async (t) => {
  const text = 'héllo ✓ 你好 😀';
  const bytes = Buffer.from(`${text}\n`, 'utf8');
  // Byte by byte: every multi-byte character is split at every possible point.
  const r = record(100);
  for (let i = 0; i < bytes.length; i += 1) r.splitter.push(bytes.subarray(i, i + 1));
  t.same(r.lines, [text]);
  t.notOk(r.lines[0]?.includes('\uFFFD'), 'no replacement character');

  // A split right inside the 4-byte emoji.
  const emoji = Buffer.from('😀\n', 'utf8');
  const r2 = record(100);
  r2.splitter.push(emoji.subarray(0, 2));
  r2.splitter.push(emoji.subarray(2));
  t.same(r2.lines, ['😀']);
});

t.test('a line over the cap calls overflow exactly once as it crosses, then the next line is normal', async (t) => {
  const r = record(10);
  r.splitter.push(Buffer.from('12345678'));
  t.same(r.overflows, [], 'still under the cap');
  r.splitter.push(Buffer.from('901'));
  t.same(r.overflows, [11], 'called as the line crosses 10 bytes, with the bytes seen');
  r.splitter.push(Buffer.from('more bytes of the same long line'));
  r.splitter.push(Buffer.from('and more'));
  t.same(r.overflows, [11], 'not called again for the same line');
  r.splitter.push(Buffer.from(' tail\nnext\n'));
  t.same(r.lines, ['next'], 'the oversized line is dropped, the next one is delivered');
  t.same(r.calls, ['overflow:11', 'line:next']);
});

t.test('a line of exactly the cap is delivered; one byte more overflows', async (t) => {
  const r = record(5);
  r.splitter.push(Buffer.from('abcde\nabcdef\nok\n'));
  t.same(r.lines, ['abcde', 'ok']);
  t.same(r.overflows, [6]);
});

t.test('two oversized lines each overflow once', async (t) => {
  const r = record(4);
  r.splitter.push(Buffer.from('aaaaaaa\nbbbbbbbbb\nc\n'));
  t.same(r.overflows, [7, 9]);
  t.same(r.lines, ['c']);
});

t.test('end() flushes a last unterminated line', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('first\nlast without newline'));
  t.same(r.lines, ['first']);
  r.splitter.end();
  t.same(r.lines, ['first', 'last without newline']);
});

t.test('end() after a terminated line delivers nothing more', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('only\n'));
  r.splitter.end();
  t.same(r.lines, ['only']);
});

t.test('end() drops an unterminated oversized line without a second overflow', async (t) => {
  const r = record(4);
  r.splitter.push(Buffer.from('0123456789'));
  r.splitter.end();
  t.same(r.lines, []);
  t.same(r.overflows, [10]);
});

/** A splitter whose sink keeps what it is told of oversized lines, in order with the lines. */
function recordEdges(maxLineBytes: number): { splitter: LineSplitter; calls: Array<string | LineEdges> } {
  const calls: Array<string | LineEdges> = [];
  const splitter = new LineSplitter(maxLineBytes, { line: (text) => calls.push(text), overflow: () => undefined, oversized: (edges) => calls.push(edges) });
  return { splitter, calls };
}

t.test("an oversized line's first and last 1 KiB and its length reach oversized() once it ends, however it was cut into chunks", async (t) => {
  const line = `${'<'.repeat(LINE_EDGE_BYTES)}${'m'.repeat(5000)}${'>'.repeat(LINE_EDGE_BYTES - 1)}!`;
  const edges = { head: '<'.repeat(LINE_EDGE_BYTES), tail: `${'>'.repeat(LINE_EDGE_BYTES - 1)}!`, bytes: line.length };
  for (const size of [1, 7, 1000, 4096, line.length + 1]) {
    const r = recordEdges(3000);
    const bytes = Buffer.from(`${line}\nnext\n`);
    for (let at = 0; at < bytes.length; at += size) r.splitter.push(bytes.subarray(at, at + size));
    t.same(r.calls, [edges, 'next'], `chunks of ${size} bytes`);
  }
});

t.test('a line just over the cap keeps all it has at each end; end() reports an unterminated one', async (t) => {
  const r = recordEdges(4);
  r.splitter.push(Buffer.from('abcdef\n0123456789'));
  r.splitter.end();
  t.same(r.calls, [
    { head: 'abcdef', tail: 'abcdef', bytes: 6 },
    { head: '0123456789', tail: '0123456789', bytes: 10 },
  ]);
});

t.test('limitText names a limit in MiB and in bytes', async (t) => {
  t.equal(limitText(MAX_RPC_LINE_BYTES), '1 MiB (1048576 bytes)');
});

t.test('end() strips a trailing \\r of the last line', async (t) => {
  const r = record(100);
  r.splitter.push(Buffer.from('tail\r'));
  r.splitter.end();
  t.same(r.lines, ['tail']);
});

t.test('encodeLine writes one JSON message and a newline', async (t) => {
  t.equal(encodeLine({ jsonrpc: '2.0', id: 1, result: { ok: true } }), '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n');
  t.equal(encodeLine({ text: 'a\nb' }), '{"text":"a\\nb"}\n', 'a newline inside a string stays escaped');
});
