// skillctl mcp's stdio transport on in-memory streams: messages in and out, and a message too
// large to read, refused under the id one end of its line shows.
import t from 'tap';
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { readOversized } from '../../clients/mcp/oversized.js';
import { MAX_MCP_MESSAGE_BYTES, StdioLineTransport } from '../../clients/mcp/stdio-transport.js';

const LIMIT = 64;
const FILLER = 'x'.repeat(LIMIT);

/** A started transport with a 64-byte limit, what it hands on, what it writes and what it reports. */
async function wired(): Promise<{ input: PassThrough; received: JSONRPCMessage[]; written: () => unknown[]; errors: string[] }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new StdioLineTransport(input, output, LIMIT);
  const received: JSONRPCMessage[] = [];
  const errors: string[] = [];
  transport.onmessage = (message) => void received.push(message);
  transport.onerror = (error) => void errors.push(error.message);
  await transport.start();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const written = (): unknown[] => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown);
  return { input, received, written, errors };
}

const refusal = (bytes: number): Record<string, unknown> => ({
  code: -32600,
  message: `a message of ${bytes} bytes is over the ${LIMIT / 1048576} MiB (${LIMIT} bytes) skillctl mcp reads in one message; it was not read`,
  data: { code: 'REQUEST_TOO_LARGE' },
});

t.test('the limit is 10 MiB, as the MCP SDK has it', async (t) => {
  t.equal(MAX_MCP_MESSAGE_BYTES, 10 * 1024 * 1024);
});

t.test('messages are read a line each, across chunks; blank lines are skipped and a line that is not a message is reported', async (t) => {
  const w = await wired();
  w.input.write('{"jsonrpc":"2.0","id":1,"met');
  w.input.write('hod":"ping"}\n\n{"jsonrpc":"2.0","method":"notifications/initialized"}\r\nnot json\n');
  t.same(w.received, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }]);
  t.equal(w.errors.length, 1, 'the line that is not JSON');
});

t.test('an oversized request is answered REQUEST_TOO_LARGE under the id at either end of its line, or none; the next message is read', async (t) => {
  const w = await wired();
  const lines = [
    `{"method":"tools/call","params":{"x":"${FILLER}"},"jsonrpc":"2.0","id":7}`,
    `{"jsonrpc":"2.0","id":"eight","method":"tools/call","params":{"x":"${FILLER}"}}`,
    FILLER + FILLER,
  ];
  w.input.write(`${lines.join('\n')}\n{"jsonrpc":"2.0","id":9,"method":"ping"}\n`);
  const bytes = lines.map((line) => Buffer.byteLength(line));
  t.same(w.written(), [
    { jsonrpc: '2.0', id: 7, error: refusal(bytes[0] as number) },
    { jsonrpc: '2.0', id: 'eight', error: refusal(bytes[1] as number) },
    { jsonrpc: '2.0', error: refusal(bytes[2] as number) },
  ]);
  t.same(w.received, [{ jsonrpc: '2.0', id: 9, method: 'ping' }], 'nothing of the oversized ones is handed on; the next message is');
  t.equal(w.errors.length, 3, 'each is reported');
});

t.test("an oversized answer to the server's request reaches it as that error, under its id, and nothing is written back", async (t) => {
  const w = await wired();
  const line = `{"result":{"action":"accept","content":{"answer":"${FILLER}"}},"jsonrpc":"2.0","id":3}`;
  w.input.write(`${line}\n`);
  t.same(w.received, [{ jsonrpc: '2.0', id: 3, error: refusal(Buffer.byteLength(line)) }]);
  t.same(w.written(), []);
});

t.test('the id of an oversized message is read only where it is a member of the top-level object', async (t) => {
  t.same(readOversized('{"method":"tools/call","params":{"input":{"s":"', '"}}},"jsonrpc":"2.0","id":12}'), { id: 12, response: false }, 'TypeScript SDK: last');
  t.same(readOversized('{"jsonrpc": "2.0", "id": "a\\"b", "method": "tools/call", "params": {"', 'xx"}}}'), { id: 'a"b', response: false }, 'Python SDK: first, escapes read');
  t.same(readOversized('{"jsonrpc":"2.0","id":4,"result":{"content":"', 'xx"}}'), { id: 4, response: true }, 'an answer, id first');
  t.same(readOversized('{"result":{"content":"', 'xx"},"jsonrpc":"2.0","id":5}'), { id: 5, response: true }, 'an answer, id last');
  t.same(readOversized('{"method":"tools/call","params":{"id":3,"s":"', 'xx"}}'), { id: undefined, response: false }, 'an id inside params is not the message\'s');
  t.same(readOversized('{"method":"x","params":{"s":"', 'xx","id":3}}'), { id: undefined, response: false }, 'nor one that closes a nested object');
  t.same(readOversized('{"method":"x","params":{"s":"', 'xx"},"id":1.5}'), { id: undefined, response: false }, 'an id must be a string or an integer');
  t.same(readOversized('xxxx', 'xxxx'), { id: undefined, response: false }, 'not JSON at all');
});
