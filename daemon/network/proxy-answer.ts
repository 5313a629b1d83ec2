import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** An answer the proxy gives itself, in place of the upstream's: a status, extra headers, and one line of text. */
export interface Answer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** The header that tells a client the policy refused its target, with the policy's reason code. */
export const REFUSED_HEADER = 'X-Skilld-Refused';

/** An answer of `status` whose body is `line` (made one line: control characters become spaces). */
export function plainAnswer(status: number, line: string, headers: Readonly<Record<string, string>> = {}): Answer {
  return { status, headers, body: `${line.replace(/[\x00-\x1f\x7f]+/g, ' ')}\n` };
}

/** The answer to a target the policy refused: 403, the reason code in `X-Skilld-Refused`, the target and the detail in the body. */
export function refusedAnswer(authority: string, reason: string, detail: string): Answer {
  // The reason is written into a header: anything but visible ASCII would break it, or add lines to it.
  const code = reason.replace(/[^\x21-\x7e]/g, '_') || 'refused';
  return plainAnswer(403, `refused ${authority}: ${detail}`, { [REFUSED_HEADER]: code });
}

function headersOf(answer: Answer, body: Buffer): Record<string, string> {
  return { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length), ...answer.headers };
}

/**
 * Writes `answer` on a connection no HTTP server handles any more (a CONNECT's), and ends it.
 * What the client sends after is read and dropped, so that its close is seen and the socket freed.
 */
export function writeAnswer(socket: Duplex, answer: Answer): void {
  const body = Buffer.from(answer.body);
  const head = Object.entries({ ...headersOf(answer, body), Connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${head.join('')}\r\n`), body]));
  socket.resume();
}

/** Sends `answer` as the response to a request (the connection stays open for the next one). */
export function sendAnswer(response: ServerResponse, answer: Answer): void {
  if (response.destroyed) return;
  const body = Buffer.from(answer.body);
  response.writeHead(answer.status, headersOf(answer, body));
  response.end(body);
}
