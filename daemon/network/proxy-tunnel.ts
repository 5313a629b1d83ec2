import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { pipeline, type Duplex } from 'node:stream';
import { plainAnswer, writeAnswer } from './proxy-answer.js';
import { DIAL_TIMEOUT_MS, judge, type Dial, type ProxyParts } from './proxy-policy.js';
import { parseAuthority, type ProxyTarget } from './proxy-target.js';

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

/**
 * Answers a CONNECT request on `client`: a bad target gets a 400, a refused one a 403 (then the
 * policy is told); an allowed one is dialled at the policy's address, and once connected the two
 * connections are joined, `head` (bytes that came with the request) sent first.
 */
export async function openTunnel(request: IncomingMessage, client: Duplex, head: Buffer, parts: ProxyParts): Promise<void> {
  // The HTTP server no longer listens on this socket; an error destroys it, and its 'close' ends the other side.
  client.on('error', () => undefined);
  const target = parseAuthority(request.url ?? '', null);
  if ('problem' in target) {
    writeAnswer(client, plainAnswer(400, `bad CONNECT target: ${target.problem}`));
    return;
  }
  const verdict = await judge(parts.policy, target);
  if ('answer' in verdict) {
    writeAnswer(client, verdict.answer);
    verdict.after();
    return;
  }
  if (!client.destroyed) dial(client, head, verdict.dial, target, parts.track);
}

function dial(client: Duplex, head: Buffer, to: Dial, target: ProxyTarget, track: (socket: Socket) => void): void {
  // Half-open on both ends: one side's end is passed on as an end, and the other may still answer.
  const upstream = connect({ ...to, allowHalfOpen: true, noDelay: true, timeout: DIAL_TIMEOUT_MS });
  track(upstream);
  const failed = (error: NodeJS.ErrnoException): void => {
    upstream.destroy();
    writeAnswer(client, plainAnswer(502, `could not reach ${target.authority}: ${error.code ?? error.message}`));
  };
  const timedOut = (): void => {
    upstream.destroy();
    writeAnswer(client, plainAnswer(504, `${target.authority} did not answer within ${DIAL_TIMEOUT_MS / 1000} s`));
  };
  const gone = (): void => {
    upstream.destroy();
  };
  upstream.once('error', failed);
  upstream.once('timeout', timedOut);
  client.once('close', gone);
  upstream.once('connect', () => {
    upstream.setTimeout(0);
    upstream.off('error', failed);
    upstream.off('timeout', timedOut);
    client.off('close', gone);
    client.write(ESTABLISHED);
    if (head.length > 0) upstream.write(head);
    join(client, upstream);
  });
}

/**
 * Pipes `a` and `b` both ways: an end is passed on, and an error or a close before the end
 * destroys both (pipeline's own handling, which also keeps every 'error' handled).
 */
function join(a: Duplex, b: Duplex): void {
  pipeline(a, b, () => undefined);
  pipeline(b, a, () => undefined);
}
