import t from 'tap';
import { logPrinter } from '../../clients/follow.js';
import type { RpcClient } from '../../rpc/client.js';
import { capture } from '../helpers/skillctl.js';

const NO_DAEMON = {} as RpcClient;

/** What `logs` prints for `chunks` of data, the last one ending the log. */
function printed(chunks: string[], options: { raw?: boolean; text?: boolean; json?: boolean } = {}): string[] {
  const ctx = { ...capture(NO_DAEMON), json: options.json === true };
  const print = logPrinter(ctx, options.raw === true, options.text === true);
  let offset = 0;
  chunks.forEach((data, index) => {
    offset += Buffer.byteLength(data);
    print({ data, next_offset: offset, eof: index === chunks.length - 1 }, index === chunks.length - 1);
  });
  return ctx.out;
}

t.test('a line break split between two chunks of a log stays a line break; a carriage return alone is shown', async (t) => {
  t.equal(printed(['one\r', '\ntwo\r\n']).join(''), 'one\r\ntwo\r\n', 'CR at the end of a chunk, LF at the start of the next');
  t.equal(printed(['one\r', 'two\n']).join(''), 'one\\x0dtwo\n', 'no line feed follows: the carriage return is shown');
  t.equal(printed(['last\r']).join(''), 'last\\x0d', 'at the end of the log nothing more can follow');
  t.equal(printed(['a\r', '', '\n']).join(''), 'a\r\n', 'an empty chunk between (logs -f waiting) changes nothing');
  t.equal(printed(['one\r', '\x1b[2Jtwo\n'], { raw: true }).join(''), 'one\\u000d\\u001b[2Jtwo\n', '--raw: escaped as JSON escapes them');
});

t.test('text ends on a line break of its own; the bytes of --raw and --stderr are left as they end', async (t) => {
  t.equal(printed(['streamed', ' message'], { text: true }).join(''), 'streamed message\n');
  t.equal(printed(['no end'], { raw: true }).join(''), 'no end');
});

t.test('--json: each answer with data, and the last one, as a JSON line with its controls escaped', async (t) => {
  const lines = printed(['a\x9b', '', 'b'], { json: true });
  t.equal(lines.length, 2, 'an empty answer while the log waits is not printed');
  t.equal(lines[0], '{"data":"a\\u009b","next_offset":3,"eof":false}');
  t.same(JSON.parse(lines[1] ?? ''), { data: 'b', next_offset: 4, eof: true });
});
