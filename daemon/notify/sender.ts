import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock } from '../base/clock.js';

/** How long one attempt may take, from connecting to the answer's status line. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** What one POST came to: the receiver's status code, or why there was none. */
export type SendOutcome = { status: number; error: null } | { status: null; error: string };

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** Sends one attempt; resolves with its outcome, never rejects. `signal` drops it unanswered (the daemon stops). */
export type Send = (request: SendRequest, signal: AbortSignal) => Promise<SendOutcome>;

/** Whether a status counts as delivered: 2xx alone. A redirect is not followed, and counts as a failure. */
export function delivered(outcome: SendOutcome): boolean {
  return outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
}

/**
 * The real sender: one POST with node:http or node:https, no connection kept for later, no
 * redirect followed, given up after ATTEMPT_TIMEOUT_MS on `clock`. Only the status is read: the
 * answer's body is dropped unread.
 */
export function httpSender(clock: Clock, timeoutMs = ATTEMPT_TIMEOUT_MS): Send {
  return (request, signal) =>
    new Promise<SendOutcome>((resolve) => {
      let req: ClientRequest | null = null;
      const timer = clock.setTimer(timeoutMs, () => {
        settle({ status: null, error: `no answer within ${timeoutMs / 1000} s` });
        req?.destroy();
      });
      let settled = false;
      const settle = (outcome: SendOutcome): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        resolve(outcome);
      };
      try {
        const url = new URL(request.url);
        const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
        const headers = { ...request.headers, 'Content-Length': String(Buffer.byteLength(request.body)) };
        req = send(url, { method: 'POST', agent: false, signal, headers }, (res: IncomingMessage) => {
          settle({ status: res.statusCode ?? 0, error: null });
          res.destroy();
        });
      } catch (error) {
        settle({ status: null, error: (error as Error).message });
        return;
      }
      req.on('error', (error: Error) => settle({ status: null, error: errorText(error) }));
      req.end(request.body);
    });
}

/** `ECONNREFUSED 127.0.0.1:9`, `ENOTFOUND example.invalid`, or the message. */
function errorText(error: Error): string {
  if (error.name === 'AbortError') return 'dropped: the daemon stopped';
  return error.message;
}
