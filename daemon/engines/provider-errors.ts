import type { ProcessOutcome } from '../model/gate.js';

/**
 * A model provider that refuses an engine's key, or keeps limiting its requests, is a matter of
 * the job's setup, not of the engine or the skill, and a client acts on it otherwise (another key;
 * a later retry). A model gateway sees the provider's answers itself; where none runs, this module
 * reads the same out of what the engine reported: its own error report (an error event, an error
 * result, a protocol error, with the status and error type some engines give in fields of their
 * own) and the last lines of its stderr. Only clear evidence counts: a status in an error line, a
 * provider's error type or its wording; never the agent's messages, which may say "429" about
 * anything, and never a refusal by the job's own network (its egress proxy answers 403 too).
 */

export type ProviderCode = 'PROVIDER_AUTH_FAILED' | 'PROVIDER_RATE_LIMITED';

/** What an engine's error report carries besides its words, in fields of its own. */
export interface ErrorFields {
  /** The provider's HTTP status (Claude `api_error_status`, Codex `httpStatusCode`, an ACP error's code). */
  status: number | null;
  /** An error type (Claude `api_error_type`, Codex `codexErrorInfo`, Gemini's error `type`). */
  type: string | null;
}

/** Evidence that the provider refused the key or limited the requests, with its status where known. */
export interface ProviderSign {
  code: ProviderCode;
  status: number | null;
}

const AUTH_STATUSES: ReadonlySet<number> = new Set([401, 403]);
const RATE_STATUSES: ReadonlySet<number> = new Set([429, 503, 529]);

/** Error types, lower-cased: Anthropic's and Claude Code's, Codex's `codexErrorInfo`, OpenAI's codes, Gemini's fatal error class. */
const AUTH_TYPES: ReadonlySet<string> = new Set(['authentication_error', 'authentication_failed', 'permission_error', 'unauthorized', 'invalid_api_key', 'fatalauthenticationerror']);
const RATE_TYPES: ReadonlySet<string> = new Set(['rate_limit_error', 'rate_limit', 'rate_limit_exceeded', 'overloaded_error', 'overloaded', 'serveroverloaded', 'usagelimitexceeded', 'usage_limit_reached', 'resource_exhausted']);

/**
 * A status where an error line says it is one: `unexpected status 401 Unauthorized`, `last status:
 * 429 Too Many Requests`, `"code": 429` (also in JSON quoted again: `\"code\":429`), `status: 401`,
 * `HTTP 503`, `API Error: 401 …`, `Request rejected (429)`. A bare number is no status.
 */
const STATUS_IN_TEXT: readonly RegExp[] = [
  /\b(?:status(?:[ _]?code)?|http(?:[ _]status)?|error[ _]code|error_status|code)(?:\\?["'])?\s{0,3}[:=]?\s{0,3}(?:\\?["'])?(\d{3})\b/gi,
  /\bHTTP\/\d(?:\.\d)? (\d{3})\b/g,
  /\bAPI Error:?\s{0,3}(\d{3})\b/gi,
  /\brejected \((\d{3})\)/gi,
  /\b(\d{3}) (?:Unauthorized|Forbidden|Too Many Requests|Service Unavailable)\b/gi,
];
/** The providers' own wording of a refused key (Anthropic, Claude Code, OpenAI, Google). */
const AUTH_WORDS = /invalid x-api-key|authentication_error|authentication_failed|incorrect api key|invalid api key|api key not valid|api_key_invalid|invalid_api_key|permission_error/i;
const AUTH_CODES = /\b(?:PERMISSION_DENIED|UNAUTHENTICATED)\b/;
/** … and of limited requests or an overloaded service. */
const RATE_WORDS = /rate_limit_error|rate_limit_exceeded|ratelimitexceeded|too many requests|overloaded_error|usage_limit_reached|resource has been exhausted|rate limit reached|model is overloaded|\b(?:503|529)\b.{0,40}\boverloaded\b/i;
const RATE_CODES = /\bRESOURCE_EXHAUSTED\b/;
/**
 * A refusal by a proxy (the job's egress proxy answers `403` with `refused <host>:<port>: …`; a
 * CONNECT refused is a tunnel error): the job's network said no, not the provider.
 */
const NETWORK_REFUSAL = /\bproxy\b|\btunnel\b|\brefused \S+:\d+: /i;
/** How much of one line is read: a line can be megabytes long. */
const LINE_CHARS = 4096;

/** The sign a status gives: 401 and 403 refuse the key; 429, 503 and 529 limit the requests. */
export function statusSign(status: number | null | undefined): ProviderSign | null {
  if (typeof status !== 'number') return null;
  if (AUTH_STATUSES.has(status)) return { code: 'PROVIDER_AUTH_FAILED', status };
  if (RATE_STATUSES.has(status)) return { code: 'PROVIDER_RATE_LIMITED', status };
  return null;
}

/** The sign an error type gives, whatever its case. */
export function typeSign(type: string | null | undefined): ProviderSign | null {
  if (typeof type !== 'string') return null;
  const name = type.toLowerCase();
  if (AUTH_TYPES.has(name)) return { code: 'PROVIDER_AUTH_FAILED', status: null };
  if (RATE_TYPES.has(name)) return { code: 'PROVIDER_RATE_LIMITED', status: null };
  return null;
}

/** The sign one line of an engine's error output gives: a status said as one, else the providers' wording. */
export function lineSign(line: string): ProviderSign | null {
  const text = line.slice(0, LINE_CHARS);
  for (const pattern of STATUS_IN_TEXT) {
    for (const match of text.matchAll(pattern)) {
      const sign = statusSign(Number(match[1]));
      if (sign !== null) return sign;
    }
  }
  if (AUTH_WORDS.test(text) || AUTH_CODES.test(text)) return { code: 'PROVIDER_AUTH_FAILED', status: null };
  if (RATE_WORDS.test(text) || RATE_CODES.test(text)) return { code: 'PROVIDER_RATE_LIMITED', status: null };
  return null;
}

function refusedByNetwork(lines: readonly string[]): boolean {
  return lines.some((line) => NETWORK_REFUSAL.test(line.slice(0, LINE_CHARS)));
}

/**
 * The first sign in lines of the engine's error output, with the status a later line gives it
 * where the first gives none (Gemini's error document has the words, then the code); none at all
 * where one of the lines is a proxy's refusal.
 */
export function linesSign(lines: readonly string[]): ProviderSign | null {
  if (refusedByNetwork(lines)) return null;
  const signs = lines.map(lineSign).filter((sign): sign is ProviderSign => sign !== null);
  const first = signs[0];
  if (first === undefined) return null;
  return signs.find((sign) => sign.code === first.code && sign.status !== null) ?? first;
}

/**
 * The sign of the error an engine reported as its own (its words, and the fields it gave with
 * them): a status field first, then an error type, then the words; none where the words are a
 * proxy's refusal, whatever the fields say.
 */
export function reportSign(text: string | null, fields: ErrorFields | null): ProviderSign | null {
  const lines = text === null ? [] : text.split('\n');
  if (refusedByNetwork(lines)) return null;
  return statusSign(fields?.status) ?? typeSign(fields?.type) ?? linesSign(lines);
}

/** The turn's failure as the provider's: `quote` is the engine's line, already cut and redacted (error-lines.ts). */
export function providerOutcome(sign: ProviderSign, quote: string | null): ProcessOutcome {
  const status = sign.status === null ? '' : ` (HTTP ${sign.status})`;
  const what = sign.code === 'PROVIDER_AUTH_FAILED' ? `the model provider refused the engine's key${status}` : `the model provider limited the engine's requests${status} and the engine gave up`;
  return { kind: 'failed', code: sign.code, message: quote === null ? what : `${what}: ${quote}` };
}

/**
 * The failures that only say that the engine failed: evidence of the provider's refusal explains
 * them better. A stop (timeout, cancel), a limit of the job, a session that could not be resumed
 * or a start that failed keep their own codes.
 */
const ENGINE_FAILURES: ReadonlySet<string> = new Set(['ENGINE_EXIT_NONZERO', 'ENGINE_TURN_INTERRUPTED', 'ENGINE_TURN_FAILED']);

/** `outcome`, or the provider's failure where `sign` explains a failure of the engine. */
export function explainByProvider(outcome: ProcessOutcome, sign: ProviderSign | null, quote: string | null): ProcessOutcome {
  if (sign === null || outcome.kind !== 'failed' || !ENGINE_FAILURES.has(outcome.code)) return outcome;
  return providerOutcome(sign, quote);
}

// What each engine gives in fields of its own, read the same way by one-shot turns and live sessions.

/** The fields, or null when neither is given. */
function fieldsOf(status: unknown, type: unknown): ErrorFields | null {
  const fields = { status: typeof status === 'number' ? status : null, type: typeof type === 'string' ? type : null };
  return fields.status === null && fields.type === null ? null : fields;
}

/** Claude Code's `result` (and API error `assistant`) event: `api_error_status`, `api_error_type`. */
export function claudeErrorFields(event: Record<string, unknown>): ErrorFields | null {
  return fieldsOf(event['api_error_status'], event['api_error_type']);
}

/**
 * Codex app-server's `codexErrorInfo`: a name (`unauthorized`, `usageLimitExceeded`, `other`), or
 * an object of one member naming the failure with the provider's `httpStatusCode`
 * (`{"httpConnectionFailed":{"httpStatusCode":401}}`). Null when absent or of neither form.
 */
export function codexErrorFields(info: unknown): ErrorFields | null {
  if (typeof info === 'string') return { status: null, type: info };
  if (typeof info !== 'object' || info === null || Array.isArray(info)) return null;
  const [name, value] = Object.entries(info as Record<string, unknown>)[0] ?? [];
  return name === undefined ? null : fieldsOf((value as { httpStatusCode?: unknown } | null | undefined)?.httpStatusCode, name);
}

/** An ACP error answer's code: Gemini puts the provider's HTTP status there (JSON-RPC's own codes are negative). */
export function acpErrorFields(code: unknown): ErrorFields | null {
  return typeof code === 'number' && code >= 100 && code <= 599 ? fieldsOf(code, null) : null;
}

/** Gemini's error document (`{"error": {"type", "message", "code"}}`): `code` is the provider's status or an exit code. */
export function geminiErrorFields(error: Record<string, unknown>): ErrorFields | null {
  return fieldsOf(error['code'], error['type']);
}
