import { JSONRPCServer, type JSONRPCRequest, type JSONRPCResponse } from 'json-rpc-2.0';
import { SkilldError, rpcError } from './errors.js';

/** A method implementation; `context` is whatever the transport passes (the connection). */
export type MethodHandler<C> = (params: unknown, context: C) => unknown;

/** Called for errors that are not the project's own (bugs): they are answered as INTERNAL_ERROR. */
export type InternalErrorListener = (method: string, error: unknown) => void;

/**
 * The protocol core: turns one request line into the response line(s), with no I/O. Parse errors,
 * invalid requests and unknown methods get coded errors; batches are answered with an array.
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

  /** Answers one line: a response, an array for a batch, or null when nothing is owed (notifications). */
  async handleLine(line: string, context: C): Promise<JSONRPCResponse | JSONRPCResponse[] | null> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return errorResponse(null, 'PARSE_ERROR', 'parse error: the line is not valid JSON');
    }
    if (!Array.isArray(parsed)) return this.#handleOne(parsed, context);
    if (parsed.length === 0) return errorResponse(null, 'INVALID_REQUEST', 'invalid request: empty batch');
    const answers = await Promise.all(parsed.map((item) => this.#handleOne(item, context)));
    const responses = answers.filter((answer): answer is JSONRPCResponse => answer !== null);
    return responses.length === 0 ? null : responses;
  }

  async #handleOne(item: unknown, context: C): Promise<JSONRPCResponse | null> {
    const problem = requestProblem(item);
    if (problem !== null) return errorResponse(idOf(item), 'INVALID_REQUEST', `invalid request: ${problem}`);
    return this.#server.receive(item as JSONRPCRequest, context);
  }
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

function errorResponse(id: string | number | null, code: 'PARSE_ERROR' | 'INVALID_REQUEST' | 'METHOD_NOT_FOUND', message: string): JSONRPCResponse {
  return { jsonrpc: '2.0', id, error: rpcError(code, message) };
}
