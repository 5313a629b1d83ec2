// P14's floor as a process: node byte-relay-main.js <socket> <port>. Each connection to the Unix
// socket is led to 127.0.0.1:<port> (the stand-in provider) and its bytes copied both ways as
// they come, with nothing read, parsed or metered: what any process in the gateway's place costs
// at least, since each byte crosses it once more. Says `ready` once it listens.
import { createConnection, createServer } from 'node:net';

const [socket, port] = process.argv.slice(2);
if (socket === undefined || port === undefined) {
  process.stderr.write('usage: byte-relay-main <socket> <port>\n');
  process.exit(2);
}
const server = createServer((engine) => {
  const provider = createConnection({ host: '127.0.0.1', port: Number(port), noDelay: true });
  // Each end passes on as an end (pipe), an error as a cut.
  for (const [a, b] of [[engine, provider], [provider, engine]] as const) a.on('error', () => b.destroy());
  engine.pipe(provider).pipe(engine);
});
server.listen(socket, () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => process.exit(0));
