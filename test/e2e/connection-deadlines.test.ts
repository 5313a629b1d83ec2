// Clients that dribble unfinished lines cannot keep others out: a new client makes room by
// closing the connection that has had nothing in progress the longest, an unfinished line ends
// in REQUEST_TIMEOUT, and a connection that follows a job is never closed to make room.
import t from 'tap';
import { createConnection, type Socket } from 'node:net';
import { TestDaemon } from '../helpers/daemon.js';

const MAX = 8;
const daemon = await TestDaemon.start({ config: { max_connections: MAX, line_timeout_sec: 2, idle_timeout_sec: 600 } });
t.teardown(() => daemon.cleanup());

/** A raw connection and the first line the daemon sends it (null if it closes without one). */
function open(): { socket: Socket; first: Promise<{ id?: unknown; result?: unknown; error?: { message: string; data: { code: string } } } | null> } {
  const socket = createConnection(daemon.socket);
  let text = '';
  const first = new Promise<{ id?: unknown; error?: { message: string; data: { code: string } } } | null>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))) as { error?: { message: string; data: { code: string } } });
    });
    socket.on('close', () => resolve(null));
    socket.on('error', () => undefined);
  });
  return { socket, first };
}

t.test(`${MAX} clients dribbling a line one byte at a time: a new client is served, the dribblers get REQUEST_TIMEOUT, a follower is left alone`, async (t) => {
  const follower = await daemon.client();
  await follower.request('jobs/subscribe', {});
  const dribblers = Array.from({ length: MAX - 1 }, () => open());
  // Each one writes a byte of a line that never ends, one a tenth of a second (bounded: 100 bytes).
  let bytes = 0;
  const dribble = setInterval(() => {
    for (const d of dribblers) d.socket.write(bytes === 0 ? '{' : ' ');
    if ((bytes += 1) >= 100) clearInterval(dribble);
  }, 100);
  t.teardown(() => clearInterval(dribble));
  // The follower and the dribblers fill every slot: once the daemon counts them all, a ping from a
  // new client can only be answered by making room.
  const fresh = await daemon.client();
  t.match(await fresh.request('daemon/ping'), { ok: true }, 'a new client is served');
  const firsts = await Promise.all(dribblers.map((d) => d.first));
  const codes = firsts.map((line) => line?.error?.data.code ?? 'closed without a line');
  t.ok(codes.every((code) => code === 'SERVER_BUSY' || code === 'REQUEST_TIMEOUT'), `each dribbler is told why it is closed: ${codes.join(', ')}`);
  t.ok(codes.includes('REQUEST_TIMEOUT'), 'the dribblers that were not closed to make room get REQUEST_TIMEOUT');
  clearInterval(dribble);
  t.match(await follower.request('daemon/ping'), { ok: true }, 'the follower keeps its connection');
  t.match(await fresh.request('daemon/ping'), { ok: true });
});
