// P13 The web page: the time from an event in the daemon to the page showing it, against the same
// event reaching a `skillctl watch` client, in one run. Each round creates an auto job that
// succeeds at once; the event is its status_changed to succeeded, timed from the event's `ts` (the
// daemon's clock, the same machine's). The page is `skillctl web` in Debian's chromium, on its
// list of jobs: the moment the job's row shows "succeeded" (a MutationObserver in the page, on
// performance.timeOrigin + now()); the baseline is the moment `skillctl watch --json` printed the
// event's line (read by this process as it came). Rounds are sequential and spaced out. The
// bench looks for the recorded moment every 50 ms, not at every frame, to leave the page's CPU alone.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import type { BenchContext, Benchmark } from './lib/context.js';
import { onCleanup } from './lib/cleanup.js';
import { BenchDaemon } from './lib/daemon.js';
import { ROOT } from './lib/paths.js';
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

/** Put in the page: the first moment each job's row shows "succeeded", as an epoch time in ms. */
const RECORDER = `(() => {
  window.__succeeded = {};
  const look = () => {
    for (const row of document.querySelectorAll('tr[data-job]')) {
      const id = row.getAttribute('data-job');
      if (window.__succeeded[id] === undefined && row.querySelector('.badge')?.textContent === 'succeeded') window.__succeeded[id] = performance.timeOrigin + performance.now();
    }
  };
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
})()`;

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
    const daemon = await BenchDaemon.start({ dir: await ctx.tempDir('daemon') });
    const printed = new Map<string, { at: number; ts: string }>();
    let url = '';
    const addressed = new Promise<void>((resolve) => {
      skillctl(['web', '--json', '--socket', daemon.socket], (text) => {
        url = (JSON.parse(text) as { url: string }).url;
        resolve();
      });
    });
    const watch = skillctl(['watch', '--json', '--socket', daemon.socket], (text) => {
      const at = performance.timeOrigin + performance.now();
      const event = JSON.parse(text) as WatchedEvent;
      if (event.type === 'status_changed' && event.data?.to === 'succeeded') printed.set(event.job_id, { at, ts: event.ts });
    });
    const browser = await chromium.launch({ executablePath: CHROMIUM });
    onCleanup(() => browser.close());
    try {
      await addressed;
      const page = await browser.newPage();
      await page.goto(url);
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await page.evaluate(RECORDER);
      const client = await daemon.client();
      const shown: number[] = [];
      const watched: number[] = [];
      // The first job warms both up (the engine's first start, the page's first row); it is not counted.
      for (let round = 0; round <= rounds; round += 1) {
        const job = await client.request<{ job_id: string }>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} });
        const seenAt = (await (await page.waitForFunction((id) => (globalThis as unknown as { __succeeded: Record<string, number> }).__succeeded[id], job.job_id, { timeout: 60_000, polling: 50 })).jsonValue()) as number;
        while (!printed.has(job.job_id)) await sleep(5);
        const line = printed.get(job.job_id) as { at: number; ts: string };
        if (round > 0) {
          shown.push(seenAt - Date.parse(line.ts));
          watched.push(line.at - Date.parse(line.ts));
        }
        await sleep(GAP_MS);
      }
      const s = summarize(shown);
      const w = summarize(watched);
      r.info(`event → row shows it in the page: ${fmtSummary(s)}`);
      r.info(`event → line printed by skillctl watch: ${fmtSummary(w)}`);
      r.check({ metric: 'event → page p50', value: s.p50, unit: 'ms', baseline: w.p50, baselineLabel: 'skillctl watch', target: { kind: 'ratio<=', limit: 2 } });
      r.check({ metric: 'event → page p99', value: s.p99, unit: 'ms', baseline: w.p99, baselineLabel: 'skillctl watch', target: { kind: 'ratio<=', limit: 2 } });
    } finally {
      await browser.close();
      await watch.stop();
      await daemon.stop();
    }
  },
};
