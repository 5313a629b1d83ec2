import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { isIPv6, type AddressInfo } from 'node:net';
import { Bridge } from './bridge.js';
import { Guard, securityHeaders } from './guard.js';
import { loadAssets, PAGE_DIR, type PageAssets } from './assets.js';
import { sendArtifact } from './download.js';
import { refuse, sendJson, unavailable } from './answers.js';
import { signIn } from './sign-in.js';

/** What `skillctl web` serves and where (docs/web.md). */
export interface WebOptions {
  /** The daemon's socket. */
  socket: string;
  /** The address to listen on: 127.0.0.1 unless asked otherwise. */
  listen: string;
  /** 0: a free port of the system's choice. */
  port: number;
  /** More names the page answers to (`Host`), for `--listen` on another interface. */
  allowHosts?: readonly string[];
  /**
   * A fixed token (tests), or the function that gives it once the port is known (a kept token is
   * read or written only once the port is the page's: a start that fails on a port in use changes
   * no file); a random one otherwise.
   */
  token?: string | ((port: number) => Promise<string>);
  pageDir?: string;
}

/** The most bytes of one call's body. */
export const MAX_CALL_BYTES = 1024 * 1024;

/** How often a comment line keeps an idle event stream open through proxies and tunnels. */
const KEEPALIVE_MS = 20_000;

/** The page's HTTP server: its files, calls to the daemon, event streams and artifact downloads, behind the guard. */
export class WebServer {
  readonly url: string;
  readonly port: number;
  readonly #server: Server;
  readonly #bridge: Bridge;
  readonly #streams = new Set<AbortController>();

  private constructor(server: Server, bridge: Bridge, url: string, port: number) {
    this.#server = server;
    this.#bridge = bridge;
    this.url = url;
    this.port = port;
  }

  static async start(options: WebOptions): Promise<WebServer> {
    const assets = await loadAssets(options.pageDir ?? PAGE_DIR);
    const bridge = new Bridge(options.socket);
    let guard: Guard | null = null;
    let web: WebServer | null = null;
    const server = createServer((req, res) => {
      if (guard !== null && web !== null) web.#handle(req, res, guard, assets);
      else refuse(res, 503, 'STARTING', 'the page is starting; try again'); // between listening and knowing its port
    });
    server.listen(options.port, options.listen);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    let token: string | undefined;
    try {
      token = typeof options.token === 'function' ? await options.token(port) : options.token;
    } catch (error) {
      // A browser that came in meanwhile (answered STARTING) would otherwise hold the process open.
      server.closeAllConnections();
      server.close();
      throw error;
    }
    const own = isIPv6(options.listen) ? `[${options.listen}]` : options.listen;
    const names = [own, ...(isLoopback(options.listen) ? ['127.0.0.1', 'localhost', '[::1]'] : []), ...(options.allowHosts ?? [])];
    guard = new Guard([...new Set(names)].map((name) => `${name}:${port}`), port, token);
    web = new WebServer(server, bridge, `http://${own}:${port}/?token=${guard.token}`, port);
    return web;
  }

  /** Stops listening, ends the event streams and the daemon connection. */
  async close(): Promise<void> {
    for (const stream of this.#streams) stream.abort();
    this.#bridge.close();
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close');
  }

  #handle(req: IncomingMessage, res: ServerResponse, guard: Guard, assets: PageAssets): void {
    securityHeaders(res, assets.scriptHashes);
    const url = new URL(req.url ?? '/', 'http://page');
    if (!guard.hostAllowed(req)) return refuse(res, 403, 'HOST_NOT_ALLOWED', 'this page answers only to the address skillctl web printed');
    if (req.method === 'GET' && url.pathname === '/' && url.searchParams.has('token')) {
      if (!guard.tokenMatches(url.searchParams.get('token'))) return refuse(res, 401, 'UNAUTHORIZED', 'wrong token: open the address skillctl web printed');
      // The token leaves the address bar (and its history) at once; the cookie holds it from here.
      return signIn(req, res, guard.sessionCookie());
    }
    if (!guard.signedIn(req)) return refuse(res, 401, 'UNAUTHORIZED', 'open the address skillctl web printed (with its token) first');
    const route = `${req.method ?? ''} ${url.pathname}`;
    if (route === 'POST /rpc') {
      if (!guard.sameOrigin(req)) return refuse(res, 403, 'CROSS_SITE', 'a call must come from the page itself (its Origin, with a JSON body)');
      this.#call(req, res).catch((error: unknown) => failed(res, error));
      return;
    }
    if (route === 'GET /events') return this.#events(req, res, url);
    if (route === 'GET /artifact') {
      sendArtifact(this.#bridge, res, url.searchParams.get('job_id') ?? '', url.searchParams.get('path') ?? '').catch((error: unknown) => failed(res, error));
      return;
    }
    const asset = assets.files.get(url.pathname);
    if (asset === undefined) return refuse(res, 404, 'NOT_FOUND', `no ${url.pathname} here`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'HTTP_METHOD_NOT_ALLOWED', `${req.method ?? ''} is not allowed here`);
    res.writeHead(200, { 'Content-Type': asset.type, 'Content-Length': asset.body.length });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  }

  async #call(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, MAX_CALL_BYTES);
    if (body === null) return refuse(res, 413, 'REQUEST_TOO_LARGE', `a call's body may hold at most ${MAX_CALL_BYTES} bytes`);
    let call: { method?: unknown; params?: unknown };
    try {
      call = JSON.parse(body) as typeof call;
    } catch {
      return refuse(res, 400, 'PARSE_ERROR', 'the body is not JSON');
    }
    if (typeof call !== 'object' || call === null || typeof call.method !== 'string') return refuse(res, 400, 'INVALID_REQUEST', 'the body is {"method": string, "params"?: object}');
    const answer = await this.#bridge.call(call.method, call.params);
    if ('result' in answer) return sendJson(res, 200, answer);
    const away = unavailable(answer.error);
    if (away !== null) return sendJson(res, away.status, answer, away.headers);
    // A daemon's error answer is 200: the call reached it.
    sendJson(res, answer.error.code === 'METHOD_NOT_ALLOWED' ? 403 : 200, answer);
  }

  #events(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const jobId = url.searchParams.get('job_id');
    // A browser that lost the stream asks again from the last event it got.
    const after = Number(req.headers['last-event-id'] ?? url.searchParams.get('after_seq') ?? 0);
    const params = jobId === null ? {} : { job_id: jobId, after_seq: Number.isSafeInteger(after) && after >= 0 ? after : 0 };
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    const stop = new AbortController();
    this.#streams.add(stop);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
    res.on('close', () => stop.abort());
    const send = (name: string, data: unknown, id?: number): void => {
      if (!res.writableEnded) res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    this.#bridge.stream(params, send, stop.signal).catch((error: unknown) => failed(res, error)).finally(() => {
      clearInterval(keepAlive);
      this.#streams.delete(stop);
      res.end();
    });
  }
}

/**
 * A bug met while answering: said on stderr with its stack, and answered 500 `INTERNAL_ERROR`
 * (or the answer cut short, once it began); the page server goes on.
 */
function failed(res: ServerResponse, error: unknown): void {
  process.stderr.write(`skillctl web: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  if (!res.headersSent) refuse(res, 500, 'INTERNAL_ERROR', 'the page server met a bug; its stderr says more');
  else res.destroy();
}

function isLoopback(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address === 'localhost';
}

/** The body as text, or null past `limit` bytes (the rest is read and dropped, so that the refusal reaches the sender). */
async function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= limit) chunks.push(chunk);
  }
  return bytes > limit ? null : Buffer.concat(chunks).toString('utf8');
}
