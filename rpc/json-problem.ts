/** Why a JSON value is refused; `path` (a JSON pointer) says where, when one place is at fault. */
export interface JsonProblem {
  path?: string;
  message: string;
}

interface Visit {
  node: object;
  depth: number;
  /** How the walk got here, kept as links: a path is spelled out only for a problem. */
  parent: Visit | null;
  key: string | number;
}

const NUL_IN_STRING = 'must not contain a NUL character (\\u0000)';
const NUL_IN_KEY = 'must not have a key with a NUL character (\\u0000)';

/**
 * What makes a JSON value unfit to take in, or null: objects and arrays nested deeper than
 * `maxDepth` (`{}` is one level), or a NUL character (U+0000) in a string or a key, which not
 * every store keeps (PostgreSQL's text refuses it, and its json operators fail on a document
 * that holds one). One walk finds the first of either; it is iterative, so any depth is safe.
 */
export function jsonProblem(value: unknown, maxDepth: number): JsonProblem | null {
  if (typeof value === 'string') return value.includes('\0') ? { path: '', message: NUL_IN_STRING } : null;
  if (typeof value !== 'object' || value === null) return null;
  const stack: Visit[] = [{ node: value, depth: 1, parent: null, key: '' }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    if (visit.depth > maxDepth) return { message: `nested more than ${maxDepth} levels deep` };
    const { node } = visit;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i += 1) {
        const problem = look(visit, i, node[i], stack);
        if (problem !== null) return problem;
      }
      continue;
    }
    for (const key of Object.keys(node)) {
      if (key.includes('\0')) return { path: pointer(visit), message: NUL_IN_KEY };
      const problem = look(visit, key, (node as Record<string, unknown>)[key], stack);
      if (problem !== null) return problem;
    }
  }
  return null;
}

/** Looks into one value found under `visit`: a string now, an object or array later (queued). */
function look(visit: Visit, key: string | number, value: unknown, stack: Visit[]): JsonProblem | null {
  if (typeof value === 'string') return value.includes('\0') ? { path: `${pointer(visit)}/${escapeKey(key)}`, message: NUL_IN_STRING } : null;
  if (typeof value === 'object' && value !== null) stack.push({ node: value, depth: visit.depth + 1, parent: visit, key });
  return null;
}

function pointer(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at !== null && at.parent !== null; at = at.parent) keys.push(`/${escapeKey(at.key)}`);
  return keys.reverse().join('');
}

/** RFC 6901: `~` and `/` in a key are written `~0` and `~1`. */
function escapeKey(key: string | number): string {
  return String(key).replaceAll('~', '~0').replaceAll('/', '~1');
}
