import type { ServerResponse } from 'node:http';

/**
 * How long a call answered `BUSY` waits before it is sent again (`Retry-After`, in seconds): the
 * calls out and waiting are answered well within it while the daemon answers.
 */
export const BUSY_RETRY_AFTER_SEC = 1;

/** A JSON answer with its status (and more headers). */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * An error of the way to the daemon, not of the daemon: 503 with the page server's code, and for
 * `BUSY` when to try again; null for any other error.
 */
export function unavailable(error: { code: string }): { status: number; headers: Record<string, string> } | null {
  if (error.code === 'BUSY') return { status: 503, headers: { 'Retry-After': String(BUSY_RETRY_AFTER_SEC) } };
  if (error.code === 'DAEMON_UNREACHABLE') return { status: 503, headers: {} };
  return null;
}

/** An answer that refuses the request: `{error: {code, message}}` with the HTTP status. */
export function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}
