// P14's stand-in provider as a process: node model-upstream-main.js <key> [<cert> <private key>]
// (PEM files: it speaks TLS with them). An HTTP server on
// 127.0.0.1 (the port printed as `port <n>` before `ready`) that answers `POST /v1/messages`
// carrying `x-api-key: <key>` with an event stream of at least `x-bench-bytes` bytes (default
// 2,000; its exact length in `x-bench-body-bytes`), written in blocks of 64 frames with Node's
// flow control. Any other request, or another key, gets a 401 or a 404: a gateway that did not
// swap the token in for the key is seen at once.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { deltaBlock, planStream } from './model-stream.js';

const FRAMES_PER_WRITE = 64;

const [key, certFile, keyFile] = process.argv.slice(2);
if (key === undefined || (certFile === undefined) !== (keyFile === undefined)) {
  process.stderr.write('usage: model-upstream-main <key> [<certificate.pem> <private key.pem>]\n');
  process.exit(2);
}
const block = deltaBlock(FRAMES_PER_WRITE);

/** Writes the answer's delta frames a block at a time, waiting whenever the socket is full; then its tail. */
function stream(response: ServerResponse, deltas: number, tail: Buffer): void {
  let left = deltas;
  const more = (): void => {
    while (left > 0) {
      const count = Math.min(FRAMES_PER_WRITE, left);
      left -= count;
      const full = !response.write(count === FRAMES_PER_WRITE ? block : deltaBlock(count));
      if (full) {
        response.once('drain', more);
        return;
      }
    }
    response.end(tail);
  };
  more();
}

function answer(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  request.once('end', () => {
    if (request.method !== 'POST' || request.url !== '/v1/messages') {
      response.writeHead(404).end();
      return;
    }
    if (request.headers['x-api-key'] !== key) {
      response.writeHead(401, { 'Content-Type': 'application/json' }).end('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}');
      return;
    }
    const plan = planStream(Number(request.headers['x-bench-bytes'] ?? 2000));
    response.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'x-bench-body-bytes': String(plan.bytes) });
    response.write(plan.head);
    stream(response, plan.deltas, plan.tail);
  });
}

const server =
  certFile === undefined || keyFile === undefined
    ? createHttpServer({ keepAliveTimeout: 60_000 }, answer)
    : createHttpsServer({ keepAliveTimeout: 60_000, cert: readFileSync(certFile), key: readFileSync(keyFile) }, answer);
server.listen(0, '127.0.0.1', () => process.stdout.write(`port ${(server.address() as AddressInfo).port}\nready\n`));
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
