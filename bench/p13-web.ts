// P13 The web page: the time from an event in the daemon to the page showing it, against the same
// event reaching a `skillctl watch` client, in one run. The event is a queued job's status_changed
// to canceled: each round creates a job while a hanging one holds the daemon's only slot, waits
// until the page lists it, and cancels it, so no engine starts or stops around the event to
// take the CPU from one client or the other. Both are timed from the event's `ts` (the daemon's
// clock, the same machine's). The page is `skillctl web` in Debian's chromium, on its list of
// jobs: the moment the job's row shows "canceled" (a MutationObserver in the page, on
// performance.timeOrigin + now()); the baseline is the moment `skillctl watch --json` printed the
// event's line (read by this process as it came). Rounds are sequential and spaced out; in the
// first half skillctl watch subscribed before the page, in the second after it (the daemon writes
// an event to its subscribers in that order, and on two cores the first woken runs first). The
// bench waits for the page's record without polling it, to leave the page's CPU alone. Shown
// besides (not a check): the same event read from skillctl web's event stream by this process,
// without a browser, which parts the page server's hop from the browser's.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { takeEvents } from './lib/sse.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { onCleanup } from './lib/cleanup.js';
import { BenchDaemon } from './lib/daemon.js';
import { ROOT } from './lib/paths.js';
import { ECHO_JOB, holdTheSlot } from './lib/queued-creates.js';
import { fmtSummary, summarize } from './lib/stats.js';
import { sleep } from './lib/util.js';

const SKILLCTL = join(ROOT, 'dist', 'clients', 'skillctl.js');
const CHROMIUM = process.env['SKILLD_TEST_CHROMIUM'] ?? '/usr/lib/chromium/chromium';
const GAP_MS = 100;

interface WatchedEvent {
  job_id: string;
  ts: string;
  type: string;
  data: { to?: string } | null;
}

/** Put in the page: the first moment each job's row shows "canceled", as an epoch time in ms; and which jobs it lists. */
const RECORDER = `(() => {
  const canceled = {};
  const listed = new Set();
  const waiting = new Map();
  const settle = (key, value) => {
    waiting.get(key)?.(value);
    waiting.delete(key);
  };
  const look = () => {
    for (const row of document.querySelectorAll('tr[data-job]')) {
      const id = row.getAttribute('data-job');
      if (!listed.has(id)) {
        listed.add(id);
        settle('listed ' + id, true);
      }
      if (canceled[id] === undefined && row.querySelector('.badge')?.textContent === 'canceled') {
        canceled[id] = performance.timeOrigin + performance.now();
        settle('canceled ' + id, canceled[id]);
      }
    }
  };
  // Resolves when the job is listed / shown canceled: the bench waits without polling the page.
  window.__when = (what, id) => new Promise((resolve) => {
    if (what === 'listed' && listed.has(id)) resolve(true);
    else if (what === 'canceled' && canceled[id] !== undefined) resolve(canceled[id]);
    else waiting.set(what + ' ' + id, resolve);
  });
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
})()`;

/** What RECORDER adds to the page. */
interface Recorder {
  __when(what: 'listed' | 'canceled', jobId: string): Promise<number | true>;
}

/** A started child process of skillctl whose stdout lines this process reads as they come. */
function skillctl(args: string[], line: (text: string) => void): { stop(): Promise<void> } {
  const child = spawn(process.execPath, [SKILLCTL, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  createInterface({ input: child.stdout }).on('line', line);
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  onCleanup(stop);
  return { stop };
}

/** Reads `/events` of the page at `url` (signed in with its token) in this process: when each job's status_changed to canceled arrived. */
async function readStream(url: string, signal: AbortSignal): Promise<Map<string, number>> {
  const address = new URL(url);
  const cookie = `skilld_web_${address.port}=${address.searchParams.get('token') ?? ''}`;
  const response = await fetch(new URL('/events', address), { headers: { Cookie: cookie }, signal });
  if (response.body === null) throw new Error('the page server sent no event stream');
  const arrived = new Map<string, number>();
  const body = response.body;
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of body) {
      const at = performance.timeOrigin + performance.now();
      const { events, rest } = takeEvents(buffered + decoder.decode(chunk, { stream: true }));
      buffered = rest;
      for (const { name, data } of events) {
        if (name !== 'job') continue;
        const event = JSON.parse(data) as WatchedEvent;
        if (event.type === 'status_changed' && event.data?.to === 'canceled') arrived.set(event.job_id, at);
      }
    }
  })().catch(() => undefined);
  return arrived;
}

export const p13: Benchmark = {
  id: 'P13',
  title: 'web page: a daemon event → shown by the page, vs the same event printed by skillctl watch',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    if (!existsSync(CHROMIUM)) {
      r.info(`not run: no chromium at ${CHROMIUM} (apt-get install chromium, or set SKILLD_TEST_CHROMIUM)`);
      return;
    }
    const rounds = ctx.quick ? 5 : 60;
    const daemon = await BenchDaemon.start({ dir: await ctx.tempDir('daemon'), config: { max_concurrent: 1 } });
    const printed = new Map<string, { at: number; ts: string }>();
    let url = '';
    const addressed = new Promise<void>((resolve) => {
      skillctl(['web', '--json', '--socket', daemon.socket], (text) => {
        url = (JSON.parse(text) as { url: string }).url;
        resolve();
      });
    });
    const watchLine = (text: string): void => {
      const at = performance.timeOrigin + performance.now();
      const event = JSON.parse(text) as WatchedEvent;
      if (event.type === 'status_changed' && event.data?.to === 'canceled') printed.set(event.job_id, { at, ts: event.ts });
    };
    let watch = skillctl(['watch', '--json', '--socket', daemon.socket], watchLine);
    const stop = new AbortController();
    onCleanup(async () => stop.abort());
    const browser = await chromium.launch({ executablePath: CHROMIUM });
    onCleanup(() => browser.close());
    try {
      await addressed;
      const page = await browser.newPage();
      await page.goto(url);
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await page.evaluate(RECORDER);
      const streamed = await readStream(url, stop.signal);
      const client = await holdTheSlot(daemon);
      const shown: number[] = [];
      const watched: number[] = [];
      const bare: number[] = [];
      // The first round warms both up; it is not counted.
      for (let round = 0; round <= rounds; round += 1) {
        if (round === Math.ceil(rounds / 2)) {
          // The daemon writes an event to its subscribers in the order they subscribed, and the
          // first one woken is the first to run on a busy machine: half the rounds each way.
          await watch.stop();
          watch = skillctl(['watch', '--json', '--socket', daemon.socket], watchLine);
          await sleep(1000);
        }
        const job = await client.request<{ job_id: string }>('jobs/create', ECHO_JOB);
        await page.evaluate((id) => (globalThis as unknown as Recorder).__when('listed', id), job.job_id);
        await sleep(GAP_MS);
        const shownAt = page.evaluate((id) => (globalThis as unknown as Recorder).__when('canceled', id), job.job_id);
        await client.request('jobs/cancel', { job_id: job.job_id });
        const seenAt = (await shownAt) as number;
        while (!printed.has(job.job_id) || !streamed.has(job.job_id)) await sleep(5);
        const line = printed.get(job.job_id) as { at: number; ts: string };
        if (round > 0) {
          shown.push(seenAt - Date.parse(line.ts));
          watched.push(line.at - Date.parse(line.ts));
          bare.push((streamed.get(job.job_id) as number) - Date.parse(line.ts));
        }
        await sleep(GAP_MS);
      }
      const s = summarize(shown);
      const w = summarize(watched);
      r.info(`event → row shows it in the page: ${fmtSummary(s)}`);
      r.info(`event → line printed by skillctl watch: ${fmtSummary(w)}`);
      r.info(`event → read from skillctl web's event stream without a browser: ${fmtSummary(summarize(bare))}`);
      r.check({ metric: 'event → page p50', value: s.p50, unit: 'ms', baseline: w.p50, baselineLabel: 'skillctl watch', target: { kind: 'ratio<=', limit: 2 } });
      r.check({ metric: 'event → page p99', value: s.p99, unit: 'ms', baseline: w.p99, baselineLabel: 'skillctl watch', target: { kind: 'ratio<=', limit: 2 } });
    } finally {
      stop.abort();
      await browser.close();
      await watch.stop();
      await daemon.stop();
    }
  },
};
