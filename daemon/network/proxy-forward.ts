import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { plainAnswer, sendAnswer } from './proxy-answer.js';
import { DIAL_TIMEOUT_MS, judge, type Dial, type ProxyParts } from './proxy-policy.js';
import { parseAbsoluteUri } from './proxy-target.js';

/** Headers that describe one connection, not the message: never passed on, in either direction. */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'keep-alive', 'te', 'trailer', 'upgrade']);

/** Headers that frame the body this proxy passes on as it came: a Connection header may not take them away. */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/**
 * The end-to-end headers of `raw` (a message's rawHeaders, names and values in turn): without
 * the hop-by-hop ones, those a Connection header names, and those in `drop` (lower case).
 */
export function endToEndHeaders(raw: readonly string[], drop: ReadonlySet<string> = new Set()): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]?.toLowerCase();
    if (name !== 'connection' && name !== 'proxy-connection') continue;
    for (const token of raw[i + 1]?.split(',') ?? []) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const [name = '', value = ''] = [raw[i], raw[i + 1]];
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || drop.has(lower) || (named.has(lower) && !FRAMING.has(lower))) continue;
    kept.push(name, value);
  }
  return kept;
}

/**
 * Forwards a request in absolute form (`GET http://host:port/path`): a bad target gets a 400, an
 * upgrade a 501 (CONNECT carries websockets), a refused target a 403 (then the policy is told);
 * an allowed one is sent to the policy's address, both bodies streamed as they come.
 */
export async function forwardRequest(request: IncomingMessage, response: ServerResponse, parts: ProxyParts): Promise<void> {
  const uri = parseAbsoluteUri(request.url ?? '');
  if ('problem' in uri) return sendAnswer(response, plainAnswer(400, uri.problem));
  if (request.headers.upgrade !== undefined) return sendAnswer(response, plainAnswer(501, 'the proxy does not forward upgrades: open a tunnel with CONNECT'));
  const verdict = await judge(parts.policy, uri.target);
  if ('answer' in verdict) {
    sendAnswer(response, verdict.answer);
    verdict.after();
    return;
  }
  if (!response.destroyed) pass(request, response, verdict.dial, uri.target.authority, uri.path, parts);
}

function pass(request: IncomingMessage, response: ServerResponse, to: Dial, authority: string, path: string, parts: ProxyParts): void {
  // The Host header is the URI's authority, the one the policy judged (RFC 9112 §3.2.2): a
  // different Host would ask the server at an allowed address for another site.
  const headers = ['Host', authority, ...endToEndHeaders(request.rawHeaders, new Set(['host']))];
  const upstream = httpRequest({ ...to, method: request.method ?? 'GET', path, headers, agent: false });
  let timedOut = false;
  upstream.once('socket', (socket) => {
    parts.track(socket);
    socket.setTimeout(DIAL_TIMEOUT_MS, () => {
      timedOut = true;
      upstream.destroy(new Error('the dial timed out'));
    });
    socket.once('connect', () => socket.setTimeout(0));
  });
  upstream.on('error', (error: NodeJS.ErrnoException) => {
    if (response.headersSent) response.destroy();
    else if (timedOut) sendAnswer(response, plainAnswer(504, `${authority} did not answer within ${DIAL_TIMEOUT_MS / 1000} s`));
    else sendAnswer(response, plainAnswer(502, `could not reach ${authority}: ${error.code ?? error.message}`));
  });
  upstream.once('response', (incoming) => {
    try {
      response.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEndHeaders(incoming.rawHeaders));
    } catch {
      // A status line or header Node will not write again: the client sees the connection end.
      incoming.destroy();
      response.destroy();
      return;
    }
    // An early end of either side destroys the other: the client sees a cut, never a short body that looks whole.
    pipeline(incoming, response, () => undefined);
  });
  response.once('close', () => {
    if (!response.writableFinished) upstream.destroy();
  });
  request.pipe(upstream);
}
