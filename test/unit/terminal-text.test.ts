import t from 'tap';
import { escapedText, terminalText } from '../../clients/terminal-text.js';

/** One of each class a terminal acts on, with what it would do. */
const HOSTILE = {
  clear: '\x1b[2J\x1b[H',
  title: '\x1b]0;owned\x07',
  clipboard: '\x1b]52;c;cm0gLXJmIH4K\x07',
  hidden: '\x1b[8msecret\x1b[28m',
  backspace: 'abc\x08\x08\x08',
  nul: '\x00',
  del: '\x7f',
  c1: '\x9b2J\x9d0;owned\x9c',
  bidi: '\u202eevil\u202c \u2066isolate\u2069',
} as const;

t.test('terminalText: line feeds, tabs and printable text are kept as they are', async (t) => {
  const text = 'Done.\n\tindented — héllo 你好 ✓ \\x1b stays a backslash\n';
  t.equal(terminalText(text), text);
  t.equal(terminalText(''), '');
  t.equal(terminalText('a\r\nb\r\n'), 'a\r\nb\r\n', 'a carriage return that ends a line with its line feed is a line break');
});

t.test('terminalText: C0 controls, DEL and C1 controls are shown as \\x and two hex digits', async (t) => {
  t.equal(terminalText(HOSTILE.clear), '\\x1b[2J\\x1b[H', 'clear screen and cursor home');
  t.equal(terminalText(HOSTILE.title), '\\x1b]0;owned\\x07', 'window title (OSC 0, ended by BEL)');
  t.equal(terminalText(HOSTILE.clipboard), '\\x1b]52;c;cm0gLXJmIH4K\\x07', 'clipboard write (OSC 52)');
  t.equal(terminalText(HOSTILE.hidden), '\\x1b[8msecret\\x1b[28m', 'hidden text');
  t.equal(terminalText(HOSTILE.backspace), 'abc\\x08\\x08\\x08', 'backspaces that would erase what came before');
  t.equal(terminalText(HOSTILE.nul), '\\x00');
  t.equal(terminalText('\x0b\x0c\x1f'), '\\x0b\\x0c\\x1f', 'vertical tab and form feed are not kept: only the line feed and the tab are');
  t.equal(terminalText(HOSTILE.del), '\\x7f');
  t.equal(terminalText(HOSTILE.c1), '\\x9b2J\\x9d0;owned\\x9c', 'C1 CSI, OSC and ST, U+0080 to U+009F');
  t.equal(terminalText('\x80\x9f\xa0'), '\\x80\\x9f\xa0', 'the C1 range ends at U+009F: a no-break space is text');
});

t.test('terminalText: a carriage return that does not end a line is shown, so nothing is written over', async (t) => {
  t.equal(terminalText('rm -rf ~\rls -l   '), 'rm -rf ~\\x0dls -l   ');
  t.equal(terminalText('end\r'), 'end\\x0d');
  t.equal(terminalText('a\r\r\nb'), 'a\\x0d\r\nb', 'only the carriage return just before the line feed belongs to the line break');
});

t.test('terminalText: bidi embeddings, overrides and isolates are shown as \\u and four hex digits', async (t) => {
  t.equal(terminalText(HOSTILE.bidi), '\\u202eevil\\u202c \\u2066isolate\\u2069');
  t.equal(terminalText('\u202a\u202b\u202d\u2067\u2068'), '\\u202a\\u202b\\u202d\\u2067\\u2068');
  t.equal(terminalText('שלום \u200f עולם'), 'שלום \u200f עולם', 'right-to-left text and its marks are kept: a mark only sets the direction of the space next to it');
});

t.test('terminalText: what it gives back has nothing left to show, so a second pass changes nothing', async (t) => {
  const all = Object.values(HOSTILE).join('\r\n') + '\rtail';
  const once = terminalText(all);
  t.notMatch(once, /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/, 'only line breaks and tabs are left');
  t.equal(terminalText(once), once);
});

t.test('escapedText: the same characters escaped as JSON escapes them, never dropped', async (t) => {
  t.equal(escapedText('ok\n\ttab\r\n'), 'ok\n\ttab\r\n');
  t.equal(escapedText(HOSTILE.clear), '\\u001b[2J\\u001b[H');
  t.equal(escapedText('a\rb'), 'a\\u000db');
  t.equal(escapedText(`${HOSTILE.del}${HOSTILE.c1}`), '\\u007f\\u009b2J\\u009d0;owned\\u009c');
  t.equal(escapedText(HOSTILE.bidi), '\\u202eevil\\u202c \\u2066isolate\\u2069');
});

t.test('escapedText: inside a JSON document the escapes keep its meaning, and it stays valid JSON', async (t) => {
  const value = { text: Object.values(HOSTILE).join(' '), list: ['\u202e', '\x9b'] };
  const escaped = escapedText(JSON.stringify(value));
  t.notMatch(escaped, /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/, 'no control character left, not even the ones JSON.stringify lets through');
  t.same(JSON.parse(escaped), value);
  const line = '{"type":"item.completed","text":"\x1b[2Jbad"}';
  t.same(JSON.parse(escapedText(line)), { type: 'item.completed', text: '\x1b[2Jbad' }, 'an engine line with a raw control inside a string becomes the JSON it meant');
});

t.test('a log of megabytes passes through in one piece, with every control in it shown', async (t) => {
  const block = `${'x'.repeat(1000)}\x1b[31m\n`;
  const log = block.repeat(4096);
  const shown = terminalText(log);
  t.equal(shown.length, log.length + 4096 * 3);
  t.equal(shown.split('\\x1b[31m').length - 1, 4096);
  t.equal(terminalText('y'.repeat(8 << 20)).length, 8 << 20);
});
