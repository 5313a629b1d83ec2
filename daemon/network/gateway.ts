import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Clock } from '../base/clock.js';
import type { GatewayConfig } from '../base/config-network.js';
import type { EngineName } from '../model/job.js';
import { NO_USAGE, type Usage } from '../model/usage.js';
import { relayAnswer } from './answer-relay.js';
import { AUTH_STATUSES, RETRY_STATUSES, retryWait } from './gateway-retry.js';
import { swapToken } from './gateway-token.js';
import { providerQuote } from './provider-quote.js';
import { endToEndHeaders } from './proxy-forward.js';
import { UsageMeter } from './usage-meter.js';

/** The provider behind an engine's gateway: where calls go, the key they carry, and the connections kept open to it. */
export interface Upstream {
  readonly url: URL;
  readonly key: string;
  readonly retryMaxMs: number;
  readonly agent: HttpAgent;
}

/** Opens the way to a gateway's provider: one pool of kept-alive connections, shared by the engine's jobs. */
export function openUpstream(config: GatewayConfig, key: string): Upstream {
  const url = new URL(config.upstream);
  const agent = url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  return { url, key, retryMaxMs: config.retry_max_sec * 1000, agent };
}

/** The upstream of each engine whose config names a gateway, with its key from the daemon's environment (checked at config load). */
export function openUpstreams(engines: Readonly<Record<EngineName, { gateway: GatewayConfig | null }>>, env: Readonly<Record<string, string>>): Partial<Record<EngineName, Upstream>> {
  const upstreams: Partial<Record<EngineName, Upstream>> = {};
  for (const [name, { gateway }] of Object.entries(engines) as [EngineName, { gateway: GatewayConfig | null }][]) {
    if (gateway !== null) upstreams[name] = openUpstream(gateway, env[gateway.api_key_env] ?? '');
  }
  return upstreams;
}

/** A provider's answer that ends the job: its key refused, or its rate limited past the gateway's patience. */
export interface ProviderFailure {
  code: 'PROVIDER_AUTH_FAILED' | 'PROVIDER_RATE_LIMITED';
  message: string;
}

/** A call the provider limited, retried after `wait_ms` (a `provider_retry` event). */
export interface ProviderRetry {
  status: number;
  /** 1 for the first retry of this call. */
  retry: number;
  wait_ms: number;
}

/** What the gateway of one job tells of its calls. */
export interface GatewayHooks {
  retrying(retry: ProviderRetry): void;
  failed(failure: ProviderFailure): void;
  /** A call answered: what the provider said it used (a model call, `requests` 1), or nothing (a count of tokens, an error); known once its answer is read to the end. */
  used(usage: Promise<Usage>): void;
  /** A call without the job's token. */
  refused(detail: string): void;
}

/** The largest request body the gateway holds (it keeps each whole, to send it again on a retry). */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** The largest error body read to quote; a longer one is not the provider's JSON error. */
const MAX_ERROR_BYTES = 1024 * 1024;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The model gateway of one job (docs/network.md, "The model gateway"): a request in origin form
 * that carries the job's token (hash `tokenHash`) is sent on to the provider with the key in its
 * place; the answer is streamed back as it comes, its usage read on the way. 429, 503 and 529 are
 * retried (gateway-retry.ts) while the budget lasts; past it, and on 401 or 403, the engine gets
 * the provider's answer and `failed` is told, so that the job ends saying why.
 */
export function gatewayHandler(upstream: Upstream, tokenHash: string, hooks: GatewayHooks, clock: Clock, random: () => number = Math.random): Handler {
  return (request, response) => {
    const swapped = swapToken(endToEndHeaders(request.rawHeaders, new Set(['host', 'content-length', 'transfer-encoding'])), request.url ?? '/', tokenHash, upstream.key);
    if (swapped === null) {
      hooks.refused(`${request.method ?? 'GET'} ${pathOnly(request.url)} without this job's gateway token`);
      sendJson(response, 401, { error: { type: 'authentication_error', message: "skilld's model gateway: this request does not carry this job's token" } });
      return;
    }
    void readBody(request).then((body) => {
      if (body === null) return sendJson(response, 413, { error: { type: 'request_too_large', message: `skilld's model gateway takes requests of at most ${MAX_REQUEST_BYTES} bytes` } });
      return new Call(upstream, { method: request.method ?? 'GET', path: swapped.path, headers: swapped.headers, body }, response, hooks, clock, random).send(1);
    }, () => response.destroy());
  };
}

interface Outgoing {
  method: string;
  path: string;
  headers: string[];
  body: Buffer;
}

/** One call of the engine's, tried until the provider answers it or the budget of retries is spent. */
class Call {
  readonly #started: number;
  #timer: { cancel(): void } | null = null;
  /** The request to the provider in flight, ended if the engine goes away. */
  #outgoing: { destroy(): void } | null = null;
  /** Whether a kept-alive connection the provider had closed was already replaced for this call. */
  #redialled = false;

  constructor(
    readonly upstream: Upstream,
    readonly out: Outgoing,
    readonly response: ServerResponse,
    readonly hooks: GatewayHooks,
    readonly clock: Clock,
    readonly random: () => number,
  ) {
    this.#started = clock.now().getTime();
    response.once('close', () => {
      this.#timer?.cancel();
      if (!response.writableFinished) this.#outgoing?.destroy();
    });
  }

  send(attempt: number): void {
    if (this.response.destroyed) return;
    const { url, agent } = this.upstream;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = ['Host', url.host, ...this.out.headers, 'Content-Length', String(this.out.body.length)];
    const outgoing = send({ protocol: url.protocol, hostname: url.hostname, port: url.port, method: this.out.method, path: this.out.path, headers, agent });
    this.#outgoing = outgoing;
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the provider closed as it was taken: the call never reached it; once more on a new one.
      if (outgoing.reusedSocket && !this.#redialled && !this.response.headersSent && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        this.#redialled = true;
        return this.send(attempt);
      }
      if (this.response.headersSent) this.response.destroy();
      else sendJson(this.response, 502, { error: { type: 'gateway_error', message: `skilld's model gateway could not reach ${url.host}: ${error.code ?? error.message}` } });
    });
    outgoing.once('response', (incoming) => this.#answered(incoming, attempt));
    outgoing.end(this.out.body);
  }

  #answered(incoming: IncomingMessage, attempt: number): void {
    const status = incoming.statusCode ?? 502;
    if (RETRY_STATUSES.has(status)) {
      const now = this.clock.now().getTime();
      const wait = retryWait(header(incoming, 'retry-after'), attempt, now, this.#started + this.upstream.retryMaxMs - now, this.random);
      if (wait !== null) {
        incoming.resume();
        this.hooks.retrying({ status, retry: attempt, wait_ms: wait });
        this.#timer = this.clock.setTimer(wait, () => this.send(attempt + 1));
        return;
      }
      return this.#fail(incoming, status, (quote) => ({ code: 'PROVIDER_RATE_LIMITED', message: `the provider answered ${status} after ${attempt - 1} ${attempt === 2 ? 'retry' : 'retries'} over ${this.#elapsedSec()} s (retry_max_sec ${this.upstream.retryMaxMs / 1000}): ${quote}` }));
    }
    if (AUTH_STATUSES.has(status)) return this.#fail(incoming, status, (quote) => ({ code: 'PROVIDER_AUTH_FAILED', message: `the provider refused the gateway's key (${status}): ${quote}` }));
    this.#pass(incoming, status);
  }

  /** The provider's answer, as it comes, to the engine; what it used read on the way. */
  #pass(incoming: IncomingMessage, status: number): void {
    const meter = new UsageMeter({ contentType: header(incoming, 'content-type'), contentEncoding: header(incoming, 'content-encoding', true) });
    if (!this.#head(incoming, status)) return;
    relayAnswer(incoming, this.response, (chunk) => meter.write(chunk), () => this.hooks.used(meter.end().then((usage) => usage ?? NO_USAGE)));
  }

  /** An answer that ends the job: read whole (it is small), given to the engine as it came, and told with the provider's words. */
  #fail(incoming: IncomingMessage, status: number, failure: (quote: string) => ProviderFailure): void {
    void readBody(incoming, MAX_ERROR_BYTES).then((body) => {
      if (body === null) return this.response.destroy();
      if (!this.#head(incoming, status)) return;
      this.response.end(body);
      this.hooks.failed(failure(providerQuote(body, status, this.upstream.key)));
    }, () => this.response.destroy());
  }

  #head(incoming: IncomingMessage, status: number): boolean {
    try {
      this.response.writeHead(status, incoming.statusMessage, endToEndHeaders(incoming.rawHeaders));
      return true;
    } catch {
      incoming.destroy();
      this.response.destroy();
      return false;
    }
  }

  #elapsedSec(): number {
    return Math.round((this.clock.now().getTime() - this.#started) / 100) / 10;
  }
}

/** A message's whole body; null when it is longer than `limit`; rejected when it ends before its end came. */
function readBody(message: IncomingMessage, limit = MAX_REQUEST_BYTES): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (body: Buffer | null): void => {
      settled = true;
      resolve(body);
    };
    message.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        message.destroy();
        settle(null);
      }
    });
    // One piece is the body as it is: a copy would cost a call a few microseconds for nothing.
    message.once('end', () => settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    message.once('error', reject);
    // An Error only when it is the answer: its stack costs more than the rest of a short call's reading.
    message.once('close', () => {
      if (!settled) reject(new Error('the message ended before its end'));
    });
  });
}

/**
 * A header's value as `message.headers` would give it (the first, or all joined as a list when
 * `list`), read from the raw headers: `headers` is built on first use, which costs a short call
 * more than the few look-ups the gateway makes.
 */
function header(message: IncomingMessage, name: string, list = false): string | undefined {
  const raw = message.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length !== name.length || raw[i]!.toLowerCase() !== name) continue;
    if (value === undefined) value = raw[i + 1];
    else if (list) value = `${value}, ${raw[i + 1]}`;
    else break;
  }
  return value;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.destroyed || response.headersSent) return;
  const text = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(text.length) });
  response.end(text);
}

/** A request's path without its query (which may hold a key). */
function pathOnly(url: string | undefined): string {
  return (url ?? '/').split('?')[0] ?? '/';
}
