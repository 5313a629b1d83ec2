// P6 Hot reload: a save of a skill's assets/runner.json with a new version → the new version
// listed by skills/list. Each save rewrites the file in place (as an editor does); the time runs
// from just before the write to the skills/list answer that shows the new version, after the
// skills/changed notification a subscribed connection receives. Saves are spaced out so that
// each one is its own burst. Baseline: a bare fs.watch on a folder of this process, the time
// from the same kind of write to its first event, alternating with the daemon's saves.
import { watch } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { EventHub } from './lib/events.js';
import { TEST_SKILLS } from './lib/paths.js';
import { fmtSummary, summarize } from './lib/stats.js';
import { nowMs, sleep } from './lib/util.js';

const SKILL = 'hot-skill';
const GAP_MS = 300;

interface SkillView {
  id: string;
  version: string | null;
  status: string;
}

/** Time from a write to the first fs.watch event of a bare watcher on its folder. */
async function rawWatch(dir: string, i: number): Promise<number> {
  const file = join(dir, 'runner.json');
  let t0 = 0;
  const seen = new Promise<number>((resolve) => {
    const watcher = watch(dir, () => {
      watcher.close();
      resolve(nowMs() - t0);
    });
  });
  t0 = nowMs();
  await writeFile(file, `{ "version": "1.${i}.0" }\n`);
  return seen;
}

export const p6: Benchmark = {
  id: 'P6',
  title: 'hot reload: runner.json saved → new version listed',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const saves = ctx.quick ? 5 : 20;
    const skillsDir = await ctx.tempDir('skills');
    const rawDir = await ctx.tempDir('raw');
    const skillDir = join(skillsDir, SKILL);
    await cp(join(TEST_SKILLS, 'echo-auto'), skillDir, { recursive: true });
    const runner = join(skillDir, 'assets', 'runner.json');
    const manifest = JSON.parse(await readFile(runner, 'utf8')) as Record<string, unknown>;
    const write = (version: string): Promise<void> => writeFile(runner, `${JSON.stringify({ ...manifest, id: SKILL, name: SKILL, version })}\n`);
    await write('1.0.0');
    await writeFile(join(rawDir, 'runner.json'), '{}\n');
    const daemon = await BenchDaemon.start({ dir: await ctx.tempDir('daemon'), skillsDirs: [skillsDir] });
    try {
      const client = await daemon.client();
      const hub = await EventHub.attach(client); // a subscribed connection also gets skills/changed
      const listed = async (): Promise<SkillView | undefined> => (await client.request<{ skills: SkillView[] }>('skills/list')).skills.find((s) => s.id === SKILL);
      const first = await listed();
      if (first?.version !== '1.0.0' || first.status !== 'ok') throw new Error(`${SKILL} is not listed as 1.0.0/ok at start: ${JSON.stringify(first)}`);
      const total: number[] = [];
      const notified: number[] = [];
      const raw: number[] = [];
      for (let i = 1; i <= saves; i += 1) {
        const version = `1.${i}.0`;
        const changed = hub.skillChanged(SKILL);
        const t0 = nowMs();
        await write(version);
        const notifiedAt = await changed;
        let view = await listed();
        // The notification may belong to an earlier burst; the save counts once the version is listed.
        while (view?.version !== version) {
          if (nowMs() - t0 > 10_000) throw new Error(`${SKILL} ${version} not listed 10 s after the save (listed: ${JSON.stringify(view)})`);
          await sleep(5);
          view = await listed();
        }
        total.push(nowMs() - t0);
        notified.push(notifiedAt - t0);
        await sleep(GAP_MS);
        raw.push(await rawWatch(rawDir, i));
        await sleep(50);
      }
      const s = summarize(total);
      const b = summarize(raw);
      r.info(`save → skills/changed received: ${fmtSummary(summarize(notified))}`);
      r.info(`save → new version in skills/list: ${fmtSummary(s)}`);
      r.info(`bare fs.watch, write → event: ${fmtSummary(b)}`);
      r.check({ metric: 'runner.json save → new version listed p50', value: s.p50, unit: 'ms', baseline: b.p50, baselineLabel: 'bare fs.watch', target: { kind: 'value<=', limit: 500 } });
      if (daemon.errorLines.length > 0) r.info(`daemon logged errors:\n${daemon.errorLines.join('\n')}`);
    } finally {
      await daemon.stop();
    }
  },
};
