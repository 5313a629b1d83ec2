// The bare echo server as a process: node echo-server-main.js <socket path> <canned results JSON file>
import { readFileSync } from 'node:fs';
import { createEchoServer } from './echo-server.js';

const [socketPath, cannedPath] = process.argv.slice(2);
if (socketPath === undefined || cannedPath === undefined) {
  process.stderr.write('usage: echo-server-main <socket> <canned.json>\n');
  process.exit(2);
}
const canned = JSON.parse(readFileSync(cannedPath, 'utf8')) as Record<string, unknown>;
const server = createEchoServer(canned);
server.listen(socketPath, () => process.stdout.write('ready\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
