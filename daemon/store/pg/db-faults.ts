/**
 * Which errors of a PostgreSQL client mean the database is unreachable or going away, rather
 * than a bug in a statement. Classified by the shape of the error (`code`, `syscall`, `message`),
 * so that nothing here depends on the driver.
 */

/**
 * SQLSTATEs of a server that is going away or cannot take a session now: terminated by an
 * administrator, crash shutdown, starting up or shutting down, idle session timeout, too many
 * connections; of a server that cannot take a write now: its disk is full (53100) or failed a
 * read or write (58030), as a full or failing disk is for the files store (53200, out of memory,
 * stays out: one statement can bring it about, and a retry would meet it again); and of a wait the daemon bounds (pool.ts): a row lock held too long by another
 * session (55P03, a host frozen mid-transaction), this session's transaction ended for being
 * left open too long (25P03, this host was the frozen one). (57P04, database dropped, stays
 * out: it does not come back by itself.)
 */
const FAULT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P05', '53300', '53100', '58030', '55P03', '25P03']);

/** SQLSTATE class 08: connection exceptions (the connection failed or was lost). */
const CONNECTION_EXCEPTION_CLASS = '08';

/** Socket errors of a connection that was lost, refused or never answered. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN']);

/**
 * Errors without a code that the driver raises when the connection is lost or cannot be had in
 * time: the server went away with a query in flight, a client whose connection broke is used
 * again, a connect or pool checkout timed out.
 */
const FAULT_MESSAGES = [
  /^Connection terminated unexpectedly$/,
  /^Connection terminated due to connection timeout$/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/** How deep wrapped errors (`cause`, an AggregateError's `errors`) are searched. */
const MAX_DEPTH = 4;

interface ErrorShape {
  code?: unknown;
  syscall?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Whether `error` says the database is unreachable or going away: a retry can succeed once it is back. */
export function isDatabaseFault(error: unknown): boolean {
  return databaseFaultDetail(error) !== undefined;
}

/**
 * What the database fault in `error` is, for a message: its code (SQLSTATE or socket error), or
 * its message when it has none; undefined when `error` is no database fault. Looks through
 * `cause` and the `errors` of an AggregateError (a connect that tried several addresses).
 */
export function databaseFaultDetail(error: unknown): string | undefined {
  return faultIn(error, 0);
}

function faultIn(error: unknown, depth: number): string | undefined {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return undefined;
  const { code, syscall, message, cause, errors } = error as ErrorShape;
  if (typeof code === 'string' && isFaultCode(code, syscall)) return code;
  if (typeof message === 'string' && FAULT_MESSAGES.some((pattern) => pattern.test(message))) return message;
  for (const inner of [cause, ...(Array.isArray(errors) ? errors : [])]) {
    const detail = faultIn(inner, depth + 1);
    if (detail !== undefined) return detail;
  }
  return undefined;
}

function isFaultCode(code: string, syscall: unknown): boolean {
  if (SOCKET_CODES.has(code)) return true;
  // A missing socket file means the server is down; any other missing file is not ours to judge.
  if (code === 'ENOENT') return syscall === 'connect';
  return /^[0-9A-Z]{5}$/.test(code) && (FAULT_SQLSTATES.has(code) || code.startsWith(CONNECTION_EXCEPTION_CLASS));
}
