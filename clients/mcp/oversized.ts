import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What the two ends of a message too large to read tell of it. */
export interface OversizedMessage {
  /** Its id, when one end shows it as a member of the top-level object. */
  id: RequestId | undefined;
  /** True when it answers a request of ours (a `result` or `error` member), rather than asking. */
  response: boolean;
}

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const SCALAR = String.raw`${STRING}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null`;
/** One member of the top-level object from the start of the line: its key, then its value when that is a scalar, else `{` or `[`. */
const LEADING_MEMBER = new RegExp(String.raw`\s*(${STRING})\s*:\s*(${SCALAR}|[[{])\s*,?`, 'y');
/** An `id` that is the last member of the top-level object: the line's end. */
const TRAILING_ID = new RegExp(String.raw`[{,]\s*"id"\s*:\s*(-?\d+|${STRING})\s*\}\s*$`);

/**
 * Reads the id of a JSON-RPC message from the first and last bytes of its line, without the
 * middle. The MCP TypeScript SDK writes `id` as the last member (`{"method":…,"params":…,
 * "jsonrpc":"2.0","id":7}`); the Python and Rust SDKs write it before `method` or `result`. Only
 * the members before the first object or array value are read from the start.
 */
export function readOversized(head: string, tail: string): OversizedMessage {
  const leading = leadingMembers(head);
  const response = leading.has('result') || leading.has('error');
  const id = requestId(leading.get('id')) ?? requestId(TRAILING_ID.exec(tail)?.[1]);
  return { id, response };
}

/** The top-level members read from the start of the line, up to and including the first that holds an object or array. */
function leadingMembers(head: string): Map<string, string> {
  const members = new Map<string, string>();
  const open = /^\s*\{/.exec(head);
  if (open === null) return members;
  LEADING_MEMBER.lastIndex = open[0].length;
  for (let match = LEADING_MEMBER.exec(head); match !== null; match = LEADING_MEMBER.exec(head)) {
    const [, key = '', value = ''] = match;
    const name = parsed(key);
    if (typeof name !== 'string') break;
    members.set(name, value);
    if (value === '{' || value === '[') break;
  }
  return members;
}

/** A JSON text that is a valid request id (a string or an integer), as that id. */
function requestId(json: string | undefined): RequestId | undefined {
  const value = json === undefined ? undefined : parsed(json);
  return typeof value === 'string' || Number.isSafeInteger(value) ? (value as RequestId) : undefined;
}

/** The value of a JSON text; undefined when it is not JSON (a bad escape in a string). */
function parsed(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}
