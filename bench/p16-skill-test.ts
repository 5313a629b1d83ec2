// P16 skills test: what `skillctl skills test` of a skill with one case costs, end to end, against
// the engine's own cold start for one turn, in the same run.
//
// The skill is the one `skillctl skills new` writes (auto mode) with one case whose one model
// turn is its final answer, run on the Codex CLI pinned in node_modules. Measured: `skillctl skills test
// <folder> --engine codex` as a person types it, from its start to its exit, two ways: on a daemon
// already running that serves the skill's folder (a test job: the scripted model server, the job
// in its sandbox with a home pointed at it, the check, the job removed), which is what the target
// is for, and with `--private` (a private daemon started in a temp folder and removed). The
// baseline: that Codex CLI started by hand for one turn (`codex exec`, as the daemon starts it)
// against a scripted model answering at once, from its start to its exit, in a home kept from
// turn to turn; and, for comparison, in a home made for that turn alone, as a test job gets one.
// They alternate, so that drift of the machine affects all alike.
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { realEngineBins, makeCodexHome } from '../clients/skill-test/engine-homes.js';
import { startModelServer } from '../clients/skill-test/model-server.js';
import { NODE_MODULES } from '../clients/skill-test/paths.js';
import type { BenchContext, Benchmark } from './lib/context.js';
import { BenchDaemon } from './lib/daemon.js';
import { ROOT } from './lib/paths.js';
import { fmt, median } from './lib/stats.js';
import { benchEnv } from './lib/util.js';

const SKILLCTL = join(ROOT, 'dist', 'clients', 'skillctl.js');

/** Runs a command to its end; its wall time in ms, or a failure with what it printed. */
function timed(argv: readonly string[], options: { cwd: string; env: Record<string, string>; input?: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(argv[0] as string, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stdin.end(options.input ?? '');
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`${argv.slice(0, 3).join(' ')} … exited ${String(code)}: ${out.trim().slice(-2000)}`));
    });
  });
}

export const p16: Benchmark = {
  id: 'P16',
  title: '`skillctl skills test` of a one-case skill vs the engine\'s own cold start for one turn',
  async run(ctx: BenchContext): Promise<void> {
    const r = ctx.report;
    const codex = realEngineBins(NODE_MODULES).codex;
    if (codex === null) {
      r.info(`skipped: the Codex CLI is not installed in ${NODE_MODULES} (a dev dependency: npm ci without --omit=dev)`);
      return;
    }
    const rounds = ctx.quick ? 1 : 5;
    const dir = await ctx.tempDir('skill-test');
    const env = benchEnv({ NO_COLOR: '1' });
    const skills = join(dir, 'skills');
    await mkdir(skills);
    await timed([process.execPath, SKILLCTL, 'skills', 'new', 'bench-skill', '--dir', skills], { cwd: dir, env });
    const skill = join(skills, 'bench-skill');
    // One case of one model turn, its final answer: the work of the baseline's one turn (the case
    // skills new writes runs a command first).
    const oneTurn = { name: 'answers at once', mode: 'auto', input: { text: 'Hello.' }, model: [{ final: { result: 'Done.' } }], expect: { status: 'succeeded', output: { result: 'Done.' } } };
    await rm(join(skill, 'tests'), { recursive: true });
    await mkdir(join(skill, 'tests'));
    await writeFile(join(skill, 'tests', 'one-turn.json'), JSON.stringify(oneTurn));
    const daemon = await BenchDaemon.start({ dir: await ctx.tempDir('skill-test-daemon'), skillsDirs: [skills], engines: { codex: { command: [codex], sandbox: { read_only: [NODE_MODULES] } } } });

    const server = await startModelServer({ script: () => ({ text: 'Done.' }), onUnknown: () => undefined });
    try {
      const home = await makeCodexHome(server.url, { dir: join(dir, 'codex-home') });
      const runs = { test: [] as number[], privately: [] as number[], engine: [] as number[], freshHome: [] as number[] };
      const engineTurn = async (round: number, fresh = false): Promise<number> => {
        const work = join(dir, `turn-${round}${fresh ? '-fresh' : ''}`);
        await mkdir(work);
        // A home made for this turn alone, as skills test makes one for each run: nothing of an earlier start to find.
        const used = fresh ? await makeCodexHome(server.url, { dir: join(dir, `codex-home-${round}`) }) : home;
        return timed([process.execPath, codex, 'exec', '--skip-git-repo-check', '--json', '--yolo', '--', '-'], { cwd: work, env: { ...env, ...used.env }, input: 'Say that you are done.' });
      };
      const skillsTest = (...flags: string[]): Promise<number> => timed([process.execPath, SKILLCTL, 'skills', 'test', skill, '--engine', 'codex', '--socket', daemon.socket, ...flags], { cwd: dir, env });
      // One of each first, not counted: the page cache and the CLI's first start.
      await engineTurn(0);
      await skillsTest();
      await skillsTest('--private');
      for (let round = 1; round <= rounds; round += 1) {
        if (round % 2 === 0) runs.test.push(await skillsTest());
        runs.engine.push(await engineTurn(round));
        runs.privately.push(await skillsTest('--private'));
        runs.freshHome.push(await engineTurn(round, true));
        if (round % 2 === 1) runs.test.push(await skillsTest());
      }
      r.info(`skills test on a running daemon, ms per run: ${runs.test.map(fmt).join(', ')}; with --private: ${runs.privately.map(fmt).join(', ')}; codex exec for one turn: ${runs.engine.map(fmt).join(', ')}; the same in a fresh home: ${runs.freshHome.map(fmt).join(', ')}`);
      r.info(`on a running daemon against codex exec in a fresh home: ${fmt(median(runs.test) / median(runs.freshHome))}×; with --private against codex exec: ${fmt(median(runs.privately) / median(runs.engine))}×, against it in a fresh home: ${fmt(median(runs.privately) / median(runs.freshHome))}×`);
      r.check({
        metric: `skillctl skills test on a running daemon, a skill of one case on Codex, start to exit (median of ${rounds})`,
        value: median(runs.test),
        unit: 'ms',
        baseline: median(runs.engine),
        baselineLabel: 'codex exec, one turn, start to exit',
        target: { kind: 'ratio<=', limit: 2 },
      });
    } finally {
      await server.close();
      await daemon.stop();
    }
  },
};
