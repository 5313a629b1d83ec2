// P9's baseline as a process: node file-server-main.js <socket path> <file>. Each connection
// gets the file's bytes as they are, piped from disk with Node's own flow control, and is closed.
import { createReadStream } from 'node:fs';
import { createServer } from 'node:net';

const [socketPath, file] = process.argv.slice(2);
if (socketPath === undefined || file === undefined) {
  process.stderr.write('usage: file-server-main <socket> <file>\n');
  process.exit(2);
}
const server = createServer((socket) => {
  socket.on('error', () => undefined);
  // The first line (the request) starts the stream, as a subscription's request starts a replay.
  socket.once('data', () => createReadStream(file).pipe(socket));
});
server.listen(socketPath, () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
