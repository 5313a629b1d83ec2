import type { JSONRPCResponse } from 'json-rpc-2.0';
import { rpcError } from './errors.js';

/**
 * 8 MiB: the most bytes of results one answer line carries, for a single request or a whole
 * batch. A result that would go past it is replaced by a `RESPONSE_TOO_LARGE` error, so no answer
 * can exhaust memory or exceed what a string can hold.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The answer to one request as JSON text, or a `RESPONSE_TOO_LARGE` error when it would be too long. */
export function encodeResponse(response: JSONRPCResponse, limitBytes = MAX_ANSWER_BYTES): string {
  const text = stringifyWithin(response, limitBytes);
  return text ?? tooLarge(response.id, limitBytes);
}

/**
 * The answers of a batch, encoded as they arrive and joined in request order. Results are kept
 * while the line stays within the limit; a later one that does not fit becomes an error. Error
 * answers always fit: they are small and bounded by the request line itself.
 */
export class BatchAnswer {
  readonly #parts: Array<string | null>;
  readonly #limitBytes: number;
  #bytes = 2;

  constructor(size: number, limitBytes = MAX_ANSWER_BYTES) {
    this.#parts = new Array<string | null>(size).fill(null);
    this.#limitBytes = limitBytes;
  }

  set(index: number, response: JSONRPCResponse | null): void {
    if (response === null) return;
    let text = 'error' in response ? JSON.stringify(response) : stringifyWithin(response, this.#limitBytes - this.#bytes);
    text ??= tooLarge(response.id, this.#limitBytes);
    this.#bytes += Buffer.byteLength(text) + 1;
    this.#parts[index] = text;
  }

  /** The batch's answer line, or null when every request was a notification. */
  line(): string | null {
    const parts = this.#parts.filter((part): part is string => part !== null);
    return parts.length === 0 ? null : `[${parts.join(',')}]`;
  }
}

function stringifyWithin(value: unknown, limitBytes: number): string | null {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // A value too large for one string (V8's limit) is the same case as one over our limit.
    if (error instanceof RangeError) return null;
    throw error;
  }
  // A UTF-8 byte never takes fewer than one UTF-16 unit: skip the count when it cannot be over.
  if (text.length * 3 <= limitBytes || Buffer.byteLength(text) <= limitBytes) return text;
  return null;
}

function tooLarge(id: JSONRPCResponse['id'], limitBytes: number): string {
  const message = `the answer would exceed ${limitBytes} bytes; ask for less at a time (jobs/logs reads from an offset) or send fewer requests per batch`;
  return JSON.stringify({ jsonrpc: '2.0', id, error: rpcError('RESPONSE_TOO_LARGE', message) });
}
