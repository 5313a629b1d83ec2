import { JSONRPCServer, type JSONRPCRequest, type JSONRPCResponse } from 'json-rpc-2.0';
import { BatchAnswer, encodeResponse } from './answer.js';
import { SkilldError, rpcError, type ErrorCode } from './errors.js';
import { jsonProblem, type JsonProblem } from './json-problem.js';

/** A batch holds at most this many requests; a larger one is refused whole, before any runs. */
export const MAX_BATCH_REQUESTS = 1000;
/** `params` may nest objects and arrays this many levels deep; deeper ones are refused. */
export const MAX_PARAMS_DEPTH = 64;

/** Runs one request's work; the transport passes one that limits how many run at once. */
export type RequestRunner = <T>(task: () => Promise<T>) => Promise<T>;
const runNow: RequestRunner = (task) => task();

/** A method implementation; `context` is whatever the transport passes (the connection). */
export type MethodHandler<C> = (params: unknown, context: C) => unknown;

/** Called for errors that are not the project's own (bugs): they are answered as INTERNAL_ERROR. */
export type InternalErrorListener = (method: string, error: unknown) => void;

/**
 * The protocol core: turns one request line into its answer line, with no I/O. Parse errors,
 * invalid requests and unknown methods get coded errors; batches are answered with an array; an
 * answer never exceeds `MAX_ANSWER_BYTES`.
 */
export class Dispatcher<C> {
  readonly #server: JSONRPCServer<C>;

  constructor(methods: Record<string, MethodHandler<C>>, onInternalError: InternalErrorListener) {
    // The library would console.warn every thrown error; errors are reported through onInternalError instead.
    this.#server = new JSONRPCServer<C>({ errorListener: () => undefined });
    this.#server.mapErrorToJSONRPCErrorResponse = (id, error: unknown) => {
      if (error instanceof SkilldError) return { jsonrpc: '2.0', id, error: error.toRpcError() };
      return { jsonrpc: '2.0', id, error: rpcError('INTERNAL_ERROR', 'internal error') };
    };
    this.#server.handleMethodNotFound = async (request) =>
      request.id === undefined ? null : errorResponse(request.id, 'METHOD_NOT_FOUND', `method not found: ${request.method}`);
    for (const [name, handler] of Object.entries(methods)) {
      this.#server.addMethod(name, async (params: unknown, context: C) => {
        try {
          return await handler(params, context);
        } catch (error) {
          if (!(error instanceof SkilldError)) onInternalError(name, error);
          throw error;
        }
      });
    }
  }

  /**
   * Answers one line: the answer's JSON text (an array for a batch), or null when nothing is owed
   * (notifications). Each request's work goes through `run`.
   */
  async handleLine(line: string, context: C, run: RequestRunner = runNow): Promise<string | null> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return encodeResponse(errorResponse(null, 'PARSE_ERROR', 'parse error: the line is not valid JSON'));
    }
    if (!Array.isArray(parsed)) {
      const answer = await run(() => this.#handleOne(parsed, context));
      return answer === null ? null : encodeResponse(answer);
    }
    if (parsed.length === 0) return encodeResponse(errorResponse(null, 'INVALID_REQUEST', 'invalid request: empty batch'));
    if (parsed.length > MAX_BATCH_REQUESTS) {
      return encodeResponse(errorResponse(null, 'BATCH_TOO_LARGE', `a batch holds at most ${MAX_BATCH_REQUESTS} requests; this one has ${parsed.length} and none of them ran`));
    }
    const batch = new BatchAnswer(parsed.length);
    await Promise.all(parsed.map((item, index) => run(() => this.#handleOne(item, context)).then((answer) => batch.set(index, answer))));
    return batch.line();
  }

  async #handleOne(item: unknown, context: C): Promise<JSONRPCResponse | null> {
    const problem = requestProblem(item);
    if (problem !== null) return errorResponse(idOf(item), 'INVALID_REQUEST', `invalid request: ${problem}`);
    const request = item as JSONRPCRequest;
    const refused = jsonProblem(request.params, MAX_PARAMS_DEPTH);
    if (refused !== null) return request.id === undefined ? null : paramsRefusal(request.id, request.method, refused);
    return this.#server.receive(request, context);
  }
}

/** A JSON pointer into params as a message names it: `input/text`, or `params` for the whole. */
export function fieldName(path: string): string {
  return path === '' ? 'params' : path.slice(1);
}

/** INVALID_PARAMS for a problem found before any method ran; one at a place is named as the methods' own checks name theirs. */
function paramsRefusal(id: string | number | null, method: string, problem: JsonProblem): JSONRPCResponse {
  if (problem.path === undefined) return errorResponse(id, 'INVALID_PARAMS', `invalid params for ${method}: ${problem.message}`);
  const error = new SkilldError('INVALID_PARAMS', `invalid params for ${method}: ${fieldName(problem.path)} ${problem.message}`, { details: { path: problem.path, message: problem.message } });
  return { jsonrpc: '2.0', id, error: error.toRpcError() };
}

function requestProblem(item: unknown): string | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'not an object';
  const request = item as Record<string, unknown>;
  if (request['jsonrpc'] !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof request['method'] !== 'string') return 'method must be a string';
  const id = request['id'];
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') return 'id must be a string, number or null';
  if ('result' in request || 'error' in request) return 'a request has no result or error member';
  const params = request['params'];
  if (params !== undefined && (typeof params !== 'object' || params === null)) return 'params must be an object or array';
  return null;
}

function idOf(item: unknown): string | number | null {
  if (typeof item !== 'object' || item === null) return null;
  const id = (item as Record<string, unknown>)['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function errorResponse(id: string | number | null, code: ErrorCode, message: string): JSONRPCResponse {
  return { jsonrpc: '2.0', id, error: rpcError(code, message) };
}
