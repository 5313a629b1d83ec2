// The socket server's deadlines on a fake clock: a request line that does not end in time, a
// connection idle too long, and a new client at max_connections that makes room by closing the
// connection that has had nothing in progress the longest.
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection } from '../../rpc/connection.js';
import { Dispatcher } from '../../rpc/dispatcher.js';
import { RpcServer, type ServerLimits } from '../../rpc/server.js';
import { FakeClock } from '../helpers/fake-clock.js';

const LINE_MS = 30_000;
const IDLE_MS = 600_000;

/** A client that keeps every line it gets; `answer(id)` waits for the answer to a request. */
class Client {
  readonly lines: Array<{ id?: unknown; result?: unknown; error?: { data: { code: string }; message: string } }> = [];
  readonly socket: Socket;
  readonly closed: Promise<void>;
  #rest = '';
  #wake: Array<() => void> = [];

  constructor(path: string) {
    this.socket = createConnection(path);
    this.socket.on('data', (chunk: Buffer) => {
      const parts = (this.#rest + chunk.toString()).split('\n');
      this.#rest = parts.pop() ?? '';
      for (const part of parts) this.lines.push(JSON.parse(part) as Client['lines'][number]);
      for (const wake of this.#wake.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
  }

  call(id: number, method: string, tail = ''): Promise<unknown> {
    this.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method })}\n${tail}`);
    return this.answer(id);
  }

  async answer(id: number | null): Promise<unknown> {
    for (;;) {
      const line = this.lines.find((l) => l.id === id);
      if (line !== undefined) return line.error?.data.code ?? line.result;
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }
}

interface Rig {
  clock: FakeClock;
  server: RpcServer;
  connect(): Client;
  /** Settles the `slow` requests, those in flight and those to come. */
  release(): void;
}

async function rig(t: Test, limits: Partial<ServerLimits> = {}): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-deadlines-'));
  const clock = new FakeClock();
  let release: () => void = () => undefined;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const dispatcher = new Dispatcher<Connection>({
    ping: () => 'pong',
    hold: (_params, conn) => (conn.hold(), 'held'),
    slow: async () => (await slow, 'done'),
  }, () => undefined);
  const server = new RpcServer(dispatcher, { maxConnections: 64, lineTimeoutMs: LINE_MS, idleTimeoutMs: IDLE_MS, ...limits }, () => undefined, clock);
  const path = join(dir, 'rpc.sock');
  await server.listen({ kind: 'path', path, mode: 0o600 });
  const clients: Client[] = [];
  t.teardown(async () => {
    for (const c of clients) c.socket.destroy();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    clock,
    server,
    connect: () => {
      const client = new Client(path);
      clients.push(client);
      return client;
    },
    release: () => release(),
  };
}

t.test('a request line that has not ended line_timeout after its first byte is answered REQUEST_TIMEOUT and closed, however it dribbles', async (t) => {
  const { clock, connect } = await rig(t);
  const dribbler = connect();
  // The answer to the first line shows the daemon has read the start of the second.
  t.equal(await dribbler.call(1, 'ping', '{"jsonrpc":'), 'pong');
  for (let i = 0; i < 3; i += 1) {
    clock.advance(LINE_MS / 4);
    dribbler.socket.write('"');
  }
  t.equal(dribbler.lines.length, 1, 'nothing yet, three quarters into the line\'s time');
  clock.advance(LINE_MS / 4);
  t.equal(await dribbler.answer(null), 'REQUEST_TIMEOUT');
  await dribbler.closed;
  t.match(dribbler.lines[1]?.error?.message, /within 30 s of its first byte/);

  const prompt = connect();
  t.equal(await prompt.call(1, 'ping'), 'pong', 'a line that ends in time is answered');
  clock.advance(LINE_MS * 2);
  t.equal(await prompt.call(2, 'ping'), 'pong', 'and the connection, idle for less than idle_timeout, stays');
});

t.test('a connection with nothing in progress is closed after idle_timeout; one that holds a subscription is not', async (t) => {
  const { clock, connect } = await rig(t);
  const idle = connect();
  const holding = connect();
  t.equal(await idle.call(1, 'ping'), 'pong');
  t.equal(await holding.call(1, 'hold'), 'held');
  clock.advance(IDLE_MS);
  await idle.closed;
  t.same(idle.lines.map((l) => l.id), [1], 'closed without an error line');
  clock.advance(IDLE_MS * 3);
  t.equal(await holding.call(2, 'ping'), 'pong', 'the holding connection is still served');
});

t.test('idle_timeout 0 closes no idle connection', async (t) => {
  const { clock, connect } = await rig(t, { idleTimeoutMs: 0 });
  const idle = connect();
  t.equal(await idle.call(1, 'ping'), 'pong');
  clock.advance(IDLE_MS * 10);
  t.equal(await idle.call(2, 'ping'), 'pong');
});

t.test('a line held back while the daemon does not read the connection (16 requests in flight) gets its whole time once reading resumes', async (t) => {
  const { clock, connect, release } = await rig(t);
  const busy = connect();
  const calls = Array.from({ length: 17 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'slow' })).join('\n');
  busy.socket.write(`${calls}\n{"jsonrpc":"2.0",`);
  // A round trip on another connection: the busy one's chunk has been read meanwhile.
  t.equal(await connect().call(1, 'ping'), 'pong');
  clock.advance(LINE_MS * 2);
  t.equal(busy.lines.length, 0, 'no timeout while reading waits on the daemon');
  release();
  await busy.answer(17);
  clock.advance(LINE_MS / 2);
  busy.socket.write('"id":99,"method":"ping"}\n');
  t.equal(await busy.answer(99), 'pong', 'the line ends within its time, counted from when reading resumed');
});

t.test('max_connections: a new client closes the connection that has had nothing in progress the longest; with every one busy it is refused', async (t) => {
  const { clock, connect } = await rig(t, { maxConnections: 3 });
  const idle = connect();
  t.equal(await idle.call(1, 'ping'), 'pong');
  clock.advance(1000);
  const holding = connect();
  t.equal(await holding.call(1, 'hold'), 'held');
  clock.advance(1000);
  const dribbler = connect();
  t.equal(await dribbler.call(1, 'ping', '{'), 'pong');
  clock.advance(1000);

  const second = connect();
  t.equal(await second.call(1, 'ping'), 'pong', 'the new client is served');
  t.equal(await idle.answer(null), 'SERVER_BUSY', 'the oldest spare connection made room');
  t.match(idle.lines[1]?.error?.message, /closed to make room/);

  const third = connect();
  t.equal(await third.call(1, 'hold'), 'held', 'the next new client is served too');
  t.equal(await dribbler.answer(null), 'SERVER_BUSY', 'then the one with only an unfinished line');
  t.equal(await second.call(2, 'hold'), 'held');

  const refused = connect();
  t.equal(await refused.answer(null), 'SERVER_BUSY', 'every connection busy: the newcomer is refused');
  t.match(refused.lines[0]?.error?.message, /each with a request or a subscription in progress/);
  t.equal(await holding.call(2, 'ping'), 'pong', 'the busy ones are untouched');
});
