import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Test } from 'tap';
import { chromium, type Browser, type Page } from 'playwright-core';
import { takeEvents } from '../../bench/lib/sse.js';
import { stopAtExit } from './at-exit.js';
import { ROOT, SKILLCTL_BIN } from './daemon.js';

/** The system's browser the page's tests drive: Debian's chromium (.ci/run installs it), or $SKILLD_TEST_CHROMIUM. */
export const CHROMIUM = process.env['SKILLD_TEST_CHROMIUM'] ?? '/usr/lib/chromium/chromium';

/** Why the browser tests cannot run here, or false. */
export const NO_BROWSER: string | false = existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt-get install chromium, or set SKILLD_TEST_CHROMIUM)`;

/** Where the tests leave screenshots of the page (CI keeps the folder): $SKILLD_SCREENSHOTS, else test-output/screenshots. */
export const SCREENSHOTS = process.env['SKILLD_SCREENSHOTS'] ?? join(ROOT, 'test-output', 'screenshots');

/** A desktop and a phone-sized screen. */
export const SCREENS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** A running `skillctl web`, as it printed itself. */
export interface WebPage {
  url: string;
  origin: string;
  port: number;
  token: string;
  /** Where the token is kept (a fixed `--port`), else null. */
  tokenFile: string | null;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the built `skillctl web --json` on `socket` (in `env`) and waits for the address it prints. */
export async function startWeb(socket: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<WebPage> {
  const child = stopAtExit(spawn(process.execPath, [SKILLCTL_BIN, 'web', '--socket', socket, '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env }));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`skillctl web exited with ${String(code)} before it printed its address`);
  });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string];
  lines.close();
  const { url, port, token_file: tokenFile } = JSON.parse(line) as { url: string; port: number; token_file: string | null };
  const parsed = new URL(url);
  return {
    url,
    port,
    origin: parsed.origin,
    token: parsed.searchParams.get('token') ?? '',
    tokenFile,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/**
 * A port nothing listens on now, for a page started with a fixed `--port` (a kept token): the
 * system's choice of a free one, let go at once.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** The browser, started once per test file (about a second). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM });
}

/**
 * Keeps what each page a browser test follows says on its console (messages, errors, failed
 * requests); after each test that failed, every such page still open leaves its screenshot and
 * its console in SCREENSHOTS/failed, since a wait that ends in a timeout says only what it waited
 * for. Returns the function that follows a page.
 */
export function keepFailedPages(t: Test): (page: Page) => void {
  const pages: { page: Page; said: string[] }[] = [];
  t.afterEach(async (t) => {
    const open = pages.splice(0).filter(({ page }) => !page.isClosed());
    if (t.passing()) return;
    const name = t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    await mkdir(join(SCREENSHOTS, 'failed'), { recursive: true });
    for (const [i, { page, said }] of open.entries()) {
      const file = join(SCREENSHOTS, 'failed', `${name}-${i}`);
      await page.screenshot({ path: `${file}.png`, fullPage: true }).catch(() => undefined);
      await writeFile(`${file}.log`, [`at ${page.url()}`, ...said].join('\n') + '\n');
      t.comment(`the page at the failure: ${file}.png, its console: ${file}.log\n${said.slice(-20).join('\n')}`);
    }
  });
  return (page) => {
    const said: string[] = [];
    page.on('console', (message) => said.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => said.push(`error: ${error.stack ?? error.message}`));
    page.on('requestfailed', (request) => said.push(`failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`));
    pages.push({ page, said });
  };
}

/**
 * `page`, followed (keepFailedPages), signed in through the printed address, then at the page's
 * `place` (a hash route), loaded afresh. Waits for the sign-in's redirect first, so that the place
 * is never asked for while the address still changes.
 */
export async function signedIn(page: Page, web: WebPage, follow: (page: Page) => void, place = '/'): Promise<Page> {
  follow(page);
  page.setDefaultTimeout(120_000);
  await page.goto(web.url);
  await page.waitForURL(`${web.origin}/`);
  if (place !== '/') await page.goto(`${web.origin}/#${place}`);
  return page;
}

/** A screenshot of the whole page, as `<name>-<screen>.png` in SCREENSHOTS. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const { width } = page.viewportSize() ?? SCREENS.desktop;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width <= SCREENS.phone.width ? 'phone' : 'desktop'}.png`), fullPage: true });
}

/** One HTTP exchange with every header as given (a browser would not send a foreign Host). */
export interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function exchange(port: number, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}, address = '127.0.0.1'): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** An event stream of the page server read without a browser: the events as they come, and a way to end it. */
export interface RawStream {
  /** The next event of that name (its data, parsed), waiting for it. */
  next(name: string): Promise<unknown>;
  close(): void;
}

export function openStream(port: number, path: string, cookie: string): RawStream {
  const heard: { name: string; data: unknown }[] = [];
  const waiting: { name: string; resolve: (data: unknown) => void }[] = [];
  const hear = (name: string, data: unknown): void => {
    const i = waiting.findIndex((w) => w.name === name);
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(data);
    else heard.push({ name, data });
  };
  let buffer = '';
  const req = request({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}`, Cookie: cookie } }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const { events, rest } = takeEvents(buffer + chunk);
      buffer = rest;
      for (const { name, data } of events) hear(name, JSON.parse(data));
    });
  });
  req.on('error', () => undefined);
  req.end();
  return {
    next: (name) => {
      const i = heard.findIndex((h) => h.name === name);
      if (i >= 0) return Promise.resolve(heard.splice(i, 1)[0]?.data);
      return new Promise((resolve) => waiting.push({ name, resolve }));
    },
    close: () => req.destroy(),
  };
}

/** How many connections the daemon listening at `socket` holds now (its accepted ends, from /proc/net/unix). */
export async function daemonConnections(socket: string): Promise<number> {
  const table = await readFile('/proc/net/unix', 'utf8');
  // Num RefCount Protocol Flags Type St Inode Path: St 03 is connected; the listener is 01.
  return table.split('\n').filter((line) => {
    const fields = line.trim().split(/\s+/);
    return fields[7] === socket && fields[5] === '03';
  }).length;
}

/**
 * The Unix sockets process `pid` holds now, by inode (from /proc/<pid>/fd and /proc/net/unix):
 * the same set before and after shows that none was closed or made again meanwhile.
 */
export async function unixSocketsOf(pid: number): Promise<string[]> {
  const table = await readFile('/proc/net/unix', 'utf8');
  // Num RefCount Protocol Flags Type St Inode [Path]
  const unix = new Set(table.split('\n').slice(1).map((line) => line.trim().split(/\s+/)[6]));
  const held: string[] = [];
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined && unix.has(inode)) held.push(inode);
  }
  return held.sort();
}

/** Signs in with the page's token, as the printed address does: the session cookie, as `name=value`. */
export async function signIn(web: WebPage): Promise<string> {
  const answer = await exchange(web.port, `/?token=${web.token}`, { headers: { Host: `127.0.0.1:${web.port}` } });
  return String(answer.headers['set-cookie']).split(';')[0] ?? '';
}
